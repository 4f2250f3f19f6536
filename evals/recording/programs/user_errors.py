"""User-code mistakes in a training script, one per mode:

  dot-general         a layer's weight has the wrong input dimension
  mesh-too-large      a data x model mesh of 8 devices on a host with 1 chip
  pspec-missing-axis  a PartitionSpec naming axis 'model' on a mesh with only 'data'
  donated-reuse       a step donates its parameters and the loop then reads the donated array
"""

import sys
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mode = sys.argv[1]
print(f"devices: {jax.devices()}")

if mode == "dot-general":
    params = {"w_in": jnp.ones((512, 256)), "w_out": jnp.ones((256, 10))}  # w_in should be (784, 256)

    @jax.jit
    def forward(params, x):
        return jax.nn.relu(x @ params["w_in"]) @ params["w_out"]

    print(f"logits: {forward(params, jnp.ones((32, 784))).shape}")

elif mode == "mesh-too-large":
    print("building a (4, 2) mesh over ('data', 'model')")
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    print(f"mesh: {mesh}")

elif mode == "pspec-missing-axis":
    mesh = jax.make_mesh((len(jax.devices()),), ("data",))
    print(f"mesh: {mesh.shape}")
    w = jax.device_put(jnp.ones((1024, 1024)), NamedSharding(mesh, P(None, "model")))
    print(f"sharding: {w.sharding}")

elif mode == "donated-reuse":
    @partial(jax.jit, donate_argnums=0)
    def train_step(params, x):
        return params - 0.01 * (x.T @ (x @ params)) / x.shape[0]

    params = jnp.ones((1024, 1024))
    for step in range(3):
        new_params = train_step(params, jnp.full((64, 1024), 0.01 * (step + 1)))
        print(f"step {step} norm {float(jnp.linalg.norm(new_params)):.4f} (was {float(jnp.linalg.norm(params)):.4f})")
        params = new_params
