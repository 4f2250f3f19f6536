"""Helpers the recording programs share: notes that are not program output, and a small training step."""

from __future__ import annotations

import os
import sys


def note(msg: str) -> None:
    """A line from the recording harness, not from the workload: tagged N in the log, never mixed into O/E."""
    fd = os.environ.get("REC_NOTE_FD")
    line = f"[recorder] {msg}\n"
    if fd and fd.isdigit():
        try:
            os.write(int(fd), line.encode())
            return
        except OSError:
            pass
    sys.stderr.write(line)


def note_env() -> dict[str, str]:
    """The environment a child process of the program should get: REC_NOTE_FD is not passed on."""
    return {k: v for k, v in os.environ.items() if k != "REC_NOTE_FD"}


def child_kwargs() -> dict:
    """subprocess keyword arguments for a child whose notes must stay notes: the note pipe is passed on."""
    fd = os.environ.get("REC_NOTE_FD", "")
    if fd.isdigit():
        try:
            os.fstat(int(fd))
            return {"env": dict(os.environ), "pass_fds": (int(fd),)}
        except OSError:
            pass
    return {"env": note_env()}


def exit_code(returncode: int) -> int:
    """A Popen return code as a shell reports it (a signal N becomes 128+N)."""
    return 128 - returncode if returncode < 0 else returncode


def trainer_logger(name: str = "trainer"):
    """Python logging on stderr with a timestamp, as absl/logging trainers print their step lines."""
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s] %(message)s")
    return logging.getLogger(name)


def small_regression(seed: int = 0, width: int = 512, hidden: int = 1024):
    """A small MLP regression on the default backend: (params, jitted train_step, batch(step) -> (x, y)).

    Imports JAX only when called, so programs that never touch the chip can still use the helpers above."""
    import jax
    import jax.numpy as jnp

    key = jax.random.key(seed)
    k1, k2, k3 = jax.random.split(key, 3)
    params = {"w1": jax.random.normal(k1, (width, hidden)) * 0.02, "b1": jnp.zeros(hidden),
              "w2": jax.random.normal(k2, (hidden, 1)) * 0.02, "b2": jnp.zeros(1)}
    true_w = jax.random.normal(k3, (width, 1))

    def loss_fn(p, x, y):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    @jax.jit
    def train_step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree.map(lambda a, g: a - 0.02 * g, p, grads), loss

    def batch(step: int, rows: int = 256):
        x = jax.random.normal(jax.random.fold_in(key, step), (rows, width))
        return x, x @ true_w / width ** 0.5

    return params, train_step, batch, loss_fn
