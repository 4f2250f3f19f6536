"""HBM exhausted at run time, not at compile time: a data-parallel train step whose per-step eval logits (512 MiB of
f32 each) are kept on the device in a Python list for an epoch-end metric. Every program compiles and fits; after
enough steps the allocator cannot place the next output. Survived first: the float64 truncation warning of a config
that asks for float64, and an unusable donated buffer."""

import time

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
scale = jnp.asarray(0.5, dtype=jnp.float64)          # the config's dtype: JAX warns and uses float32
print(f"config: hidden 4096, eval logits 32768 x 4096 f32 per step, lr scale {float(scale)}")

k = jax.random.key(0)
w = jax.random.normal(k, (4096, 4096), jnp.float32) * 0.01


def step(w, x):
    h = jnp.tanh(x @ w)
    g = x.T @ h / x.shape[0]
    return w - 0.01 * g, jnp.mean(h * h)


train_step = jax.jit(step, donate_argnums=(0, 1))


@jax.jit
def eval_logits(w, x):
    return jnp.tanh(x @ w) * scale


x = jnp.ones((1024, 4096), jnp.float32)
eval_x = jnp.ones((32768, 4096), jnp.float32)
history = []
for i in range(64):
    w, loss = train_step(w, x)
    x = jnp.ones((1024, 4096), jnp.float32) * (1.0 + i / 64)
    history.append(eval_logits(w, eval_x))             # kept for the epoch-end metric: never freed
    stats = jax.devices()[0].memory_stats() or {}
    print(f"step {i} loss {float(loss):.6f} hbm_in_use {stats.get('bytes_in_use', 0) / 2**30:.2f}G")
    time.sleep(0.2)
print("epoch done")
