"""An Orbax save that runs out of space (b23): a CheckpointManager saves at steps 4 and 8 into a local directory;
before the step-8 save the space left for it ends. Where /dev/shm is a small tmpfs (a memory-backed emptyDir with
a size limit, as on a GKE pod), the checkpoint goes there and a state larger than its free space is saved (ENOSPC);
otherwise the process's file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) is lowered to 16 MiB before the step-8
save, so TensorStore's writes fail (EFBIG). Survived first: numpy's overflow warning of a float16 cast.
"""

import os
import resource
import shutil
import signal

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp

from _common import note

print(f"devices: {jax.devices()}", flush=True)
shm = shutil.disk_usage("/dev/shm") if os.path.isdir("/dev/shm") else None
use_shm = bool(shm and 96 * 2 ** 20 <= shm.free <= 3 * 2 ** 30 and os.access("/dev/shm", os.W_OK))
root = "/dev/shm/rec-b23-ckpt" if use_shm else "/tmp/rec-b23-ckpt"
shutil.rmtree(root, ignore_errors=True)
note(f"/dev/shm: {shm}; checkpoint root {root}")
rows = 4096
if use_shm:  # two saves of this state together are larger than the free space
    rows = max(4096, int(shm.free * 0.6) // (2 * 4096 * 4))
k1, k2 = jax.random.split(jax.random.key(0))
state = {"params": {"embed": jax.random.normal(k1, (rows, 4096)), "proj": jax.random.normal(k2, (rows, 4096))},
         "step": jnp.array(0)}
note(f"state {sum(x.nbytes for x in jax.tree.leaves(state)) / 2 ** 20:.0f} MiB")
scale = np.float16(np.float32(1.0e5))  # a config constant cast to float16: numpy warns (inf), the run goes on


@jax.jit
def train_step(s):
    params = jax.tree.map(lambda p: p * 0.999, s["params"])
    return {"params": params, "step": s["step"] + 1}


mngr = ocp.CheckpointManager(root, options=ocp.CheckpointManagerOptions(max_to_keep=3, save_interval_steps=4,
                                                                        create=True))
for step in range(1, 13):
    state = train_step(state)
    print(f"step {step} ok", flush=True)
    if step == 8 and not use_shm:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2 ** 20, resource.RLIM_INFINITY))
        note("RLIMIT_FSIZE lowered to 16 MiB (SIGXFSZ ignored)")
    if mngr.should_save(step):
        mngr.save(step, args=ocp.args.StandardSave(state))
        mngr.wait_until_finished()
        print(f"saved checkpoint for step {step}", flush=True)
mngr.close()
