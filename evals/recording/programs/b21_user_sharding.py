"""A sharding mistake in new model-parallel code (b21): the MLP block was written for (batch, seq, hidden)
activations and constrains them with PartitionSpec('data', None, 'model'); the packed-sequence data pipeline feeds it
(tokens, hidden), rank 2. Survived first: the float64 truncation warning of the config and a plain warm-up step."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

print(f"devices: {jax.devices()}")
mesh = jax.make_mesh((1, 1), ("data", "model"))
print(f"mesh: {mesh}")
eps = jnp.asarray(1e-6, dtype=jnp.float64)
params = {"wi": jnp.ones((1024, 4096)) * 0.01, "wo": jnp.ones((4096, 1024)) * 0.01}


def mlp(params, x, constrain):
    h = jax.nn.gelu(x @ params["wi"])
    if constrain:
        h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("data", None, "model")))
    y = h @ params["wo"]
    return jnp.mean(y * y) + eps


warmup = jax.jit(lambda p, x: mlp(p, x, False))
train_loss = jax.jit(lambda p, x: mlp(p, x, True))
x = jnp.ones((4096, 1024))                                  # packed: (tokens, hidden)
print(f"step 0 (warm-up, no constraints) loss {float(warmup(params, x)):.6f}")
print("step 1: sharded MLP (activation constraints on)")
print(f"step 1 loss {float(train_loss(params, x)):.6f}")
