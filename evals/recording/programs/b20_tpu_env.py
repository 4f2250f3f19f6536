"""TPU start-up under an environment set by the scenario (chip visibility, libtpu flags, multi-host topology
variables): asks for the devices and runs one small computation."""

import os

from _common import note

note("env: " + " ".join(f"{k}={v}" for k, v in sorted(os.environ.items())
                        if k.startswith(("TPU_", "LIBTPU", "JAX_", "XLA_", "CLOUD_TPU", "MEGASCALE"))))

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
x = jnp.arange(4096.0).reshape(64, 64)
print(f"sum: {float((x @ x).sum())}")
