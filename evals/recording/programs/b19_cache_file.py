"""Persistent compilation cache whose path is a regular file (a mis-mounted ConfigMap key / a file left by an old
sidecar at the directory's path): every cache access fails. With the default settings JAX warns and the run trains on;
with JAX_RAISE_PERSISTENT_CACHE_ERRORS=True the first cache access raises."""

import os

from _common import note

path = os.environ["JAX_COMPILATION_CACHE_DIR"]
os.makedirs(os.path.dirname(path), exist_ok=True)
if os.path.isdir(path):
    import shutil
    shutil.rmtree(path)
with open(path, "w") as f:
    f.write("compilation-cache: gs://team-bucket/jax-cache\n")
note(f"{path} is a regular file ({os.path.getsize(path)} bytes)")

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


w = jnp.ones((1024, 1024)) * 0.01
for i in range(8):
    w, loss = train_step(w, jnp.full((128, 1024), float(i + 1) / 8))
    print(f"step {i} loss {float(loss):.6f}")
    if i == 3:
        print(f"eval {float(eval_step(w, jnp.ones((128, 1024)))):.6f}")
print("done")
