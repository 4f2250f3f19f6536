"""Trains 3 steps with the persistent compilation cache at $JAX_COMPILATION_CACHE_DIR.

'read-only' first makes that (local) directory exist without write permission; 'as-is' uses the value unchanged
(a gs:// path, say).
"""

import os
import shutil
import sys

from _common import note

path = os.environ["JAX_COMPILATION_CACHE_DIR"]
if sys.argv[1] == "read-only":
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    os.chmod(path, 0o555)
    note(f"{path} made read-only (mode 555, uid {os.getuid()})")

import importlib.util

note(f"etils installed: {importlib.util.find_spec('etils') is not None}")

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
print(f"compilation cache dir: {jax.config.jax_compilation_cache_dir}")


@jax.jit
def train_step(w, x):
    loss, g = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * g, loss


@jax.jit
def eval_step(w, x):
    return jnp.mean(jnp.tanh(x @ w))


w = jnp.ones((512, 512)) * 0.01
for i in range(3):
    w, loss = train_step(w, jnp.full((64, 512), float(i + 1)))
    print(f"step {i} loss {float(loss):.6f}")
print(f"eval {float(eval_step(w, jnp.ones((64, 512)))):.6f}")
print("done")
