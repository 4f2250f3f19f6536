"""Healthy bf16 run with compile logging: a two-layer bf16 MLP (a transformer block's FFN) trained for 24 steps,
jax_log_compiles on (every compile logs a WARNING), the input batch donated though no output can reuse it (JAX warns
'Some donated buffers were not usable'), and a shorter final batch that triggers one recompilation. All of it is
benign: the loop keeps printing 'step N loss X'."""

import time
from functools import partial

import jax
import jax.numpy as jnp

jax.config.update("jax_log_compiles", True)
print(f"JAX {jax.__version__} devices: {jax.devices()}")
key = jax.random.key(1)
k1, k2, k3 = jax.random.split(key, 3)
D, F = 1024, 4096
params = {"w_in": (jax.random.normal(k1, (D, F)) * 0.02).astype(jnp.bfloat16),
          "w_out": (jax.random.normal(k2, (F, D)) * 0.02).astype(jnp.bfloat16)}
target = jax.random.normal(k3, (D, D)).astype(jnp.bfloat16) * 0.03


def loss_fn(p, x):
    h = jax.nn.gelu(x @ p["w_in"])
    y = h @ p["w_out"]
    return jnp.mean((y.astype(jnp.float32) - (x @ target).astype(jnp.float32)) ** 2)


@partial(jax.jit, donate_argnums=(1,))
def train_step(p, x):
    loss, g = jax.value_and_grad(loss_fn)(p, x)
    return jax.tree.map(lambda a, b: (a - 0.5 * b).astype(a.dtype), p, g), loss


t0 = time.time()
steps = 24
for step in range(steps):
    batch = 256 if step < steps - 1 else 96  # the last batch of the epoch is short: one recompilation
    x = jax.random.normal(jax.random.fold_in(key, step), (batch, D)).astype(jnp.bfloat16)
    params, loss = train_step(params, x)
    print(f"step {step} loss {float(loss):.6f} ({time.time() - t0:.1f}s)")
    time.sleep(max(0.0, (step + 1) * 0.8 - (time.time() - t0)))
print(f"epoch done: {steps} steps in {time.time() - t0:.1f}s")
