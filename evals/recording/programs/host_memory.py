"""Host memory exhausted after start-up: the address space is capped (RLIMIT_AS, as `ulimit -v` would) a little above
what the process already maps, then a 16 GiB dataset shard is loaded into a numpy array."""

import resource

import jax
import jax.numpy as jnp
import numpy as np

from _common import note

print(f"devices: {jax.devices()}")
print(f"warm-up: {float(jnp.ones((1024, 1024)).sum())}")
with open("/proc/self/status") as f:
    vm_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
limit = vm_kb * 1024 + (2 << 30)
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
note(f"RLIMIT_AS set to {limit / 2**30:.1f} GiB (VmSize {vm_kb / 2**20:.1f} GiB + 2 GiB)")
print("loading dataset shard train-00003-of-00128 (16 GiB)")
shard = np.ones((4 << 30,), np.float32)
print(f"loaded {shard.nbytes / 2**30:.1f} GiB")
