"""A crash by signal after start-up: three training steps on the TPU, then the process receives the signal named."""

import os
import signal
import sys

import jax
import jax.numpy as jnp

sig = getattr(signal, sys.argv[1])
print(f"devices: {jax.devices()}")


@jax.jit
def step(w, x):
    return w - 0.01 * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)


w = jnp.ones((1024, 1024))
for i in range(3):
    w = step(w, jnp.full((128, 1024), float(i)))
    print(f"step {i} norm {float(jnp.linalg.norm(w)):.4f}")
os.kill(os.getpid(), sig)
print("never reached")
