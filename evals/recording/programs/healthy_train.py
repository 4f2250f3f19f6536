"""Healthy run: a small MLP regression trained for 20 steps (~1 s each), printing 'step N loss X'."""

import time

import jax
import jax.numpy as jnp

print(f"JAX {jax.__version__} devices: {jax.devices()}")
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


t0 = time.time()
for step in range(20):
    x = jax.random.normal(jax.random.fold_in(key, step), (256, 512))
    params, loss = train_step(params, x, x @ true_w / 512 ** 0.5)
    print(f"step {step} loss {float(loss):.6f}")
    time.sleep(max(0.0, (step + 1) * 1.0 - (time.time() - t0)))  # a step every second, like an input-bound job
print(f"training done: 20 steps in {time.time() - t0:.1f}s")
