"""Host memory exhausted by the training process itself (b21): a replay buffer of rollouts kept in host RAM as one
numpy array, grown by concatenation every step and never trimmed. The address space is capped (RLIMIT_AS, as a
container's memory limit would be reached) 6 GiB above what the process maps after start-up, so the machine stays far
from pressure; the growth ends in numpy's MemoryError."""

import resource
import time

import jax
import jax.numpy as jnp
import numpy as np

from _common import note

print(f"devices: {jax.devices()}")
with open("/proc/self/status") as f:
    vm_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
limit = vm_kb * 1024 + (6 << 30)
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
note(f"RLIMIT_AS set to {limit / 2**30:.1f} GiB (VmSize {vm_kb / 2**20:.1f} GiB + 6 GiB)")


@jax.jit
def policy_step(w, obs):
    logits = jnp.tanh(obs @ w)
    return w + 1e-4 * obs.T @ logits / obs.shape[0], logits


w = jnp.ones((1024, 1024)) * 0.01
buffer = np.zeros((0, 1024), np.float32)
for i in range(200):
    obs = jnp.full((2048, 1024), (i % 7) / 7.0)
    w, logits = policy_step(w, obs)
    rollout = np.repeat(np.asarray(logits), 64, axis=0)           # 2048*64 rows: 512 MiB of f32 per step
    buffer = np.concatenate([buffer, rollout])
    with open("/proc/self/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    print(f"step {i} replay_buffer {buffer.nbytes / 2**30:.2f} GiB host_rss {rss / 2**20:.2f} GiB")
    time.sleep(0.1)
