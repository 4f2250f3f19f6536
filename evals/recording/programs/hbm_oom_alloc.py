"""HBM exhausted at allocation: 1 GiB device buffers kept alive until the TPU allocator refuses one."""

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
print(f"memory: {jax.devices()[0].memory_stats()}")
buffers = []
for i in range(64):
    buffers.append(jnp.full((256, 1024, 1024), float(i), jnp.float32))  # 1 GiB each
    buffers[-1].block_until_ready()
    print(f"allocated {i + 1} GiB of activations")
print("never reached: 64 GiB allocated")
