"""Batch-20 training loop on the TPU, printing 'step N loss X' (Python logging on stderr, as absl/logging trainers do).

Modes (argv[1]):
  healthy   30 steps at ~1 s, an eval step first compiled at step 15 whose donated buffer cannot be reused
            (JAX's 'Some donated buffers were not usable' warning): real start-up and run noise, no failure
  sigbus    5 steps, then the loop reads a memory-mapped shard file that was truncated underneath it: SIGBUS
  sigterm   5 steps, then the process gets SIGTERM (what a node shutdown or a JobSet teardown sends)
"""

import logging
import mmap
import os
import signal
import sys
import time

import jax
import jax.numpy as jnp

from _common import note

mode = sys.argv[1] if len(sys.argv) > 1 else "healthy"
steps = {"healthy": 30}.get(mode, 5)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s] %(message)s")
log = logging.getLogger("trainer")
log.info("JAX %s, devices %s", jax.__version__, jax.devices())

key = jax.random.key(0)
k1, k2, k3 = jax.random.split(key, 3)
params = {"w1": jax.random.normal(k1, (512, 1024)) * 0.02, "b1": jnp.zeros(1024),
          "w2": jax.random.normal(k2, (1024, 1)) * 0.02, "b2": jnp.zeros(1)}
true_w = jax.random.normal(k3, (512, 1))


def loss_fn(p, x, y):
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


@jax.jit
def train_step(p, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
    return jax.tree.map(lambda a, g: a - 0.02 * g, p, grads), loss


def eval_step(p, x, y):  # x is donated, but no output has its shape: JAX warns and goes on
    return loss_fn(p, x, y)


eval_step = jax.jit(eval_step, donate_argnums=(1,))

shard = None
if mode == "sigbus":
    path = "/tmp/rec-b20-shard-00017.bin"
    with open(path, "wb") as f:
        f.truncate(64 << 20)
    fd = os.open(path, os.O_RDWR)
    shard = mmap.mmap(fd, 64 << 20)
    log.info("input shard %s mapped (%d bytes)", path, len(shard))

t0 = time.time()
for step in range(steps):
    x = jax.random.normal(jax.random.fold_in(key, step), (256, 512))
    params, loss = train_step(params, x, x @ true_w / 512 ** 0.5)
    log.info("step %d loss %.6f", step, float(loss))
    if mode == "healthy" and step in (15, 25):
        xe = jax.random.normal(jax.random.fold_in(key, 1000 + step), (256, 512))
        log.info("eval at step %d: loss %.6f", step, float(eval_step(params, xe, xe @ true_w / 512 ** 0.5)))
    time.sleep(max(0.0, (step + 1) * 1.0 - (time.time() - t0)))

if mode == "sigbus":
    os.truncate("/tmp/rec-b20-shard-00017.bin", 0)  # the file shrinks under the mapping (another writer, eviction)
    note("shard truncated to 0 bytes; reading page 4096 of the mapping next")
    log.info("reading next batch from shard")
    b = shard[40 << 20]
    note(f"read returned {b!r}: no SIGBUS, sending one")
    os.kill(os.getpid(), signal.SIGBUS)
elif mode == "sigterm":
    note("sending SIGTERM to self")
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(15)
    note("still alive 15 s after SIGTERM")
log.info("training done: %d steps in %.1fs", steps, time.time() - t0)
