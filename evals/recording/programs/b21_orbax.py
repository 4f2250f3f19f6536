"""Orbax checkpoint failures of a resumed run (b21):

  step-exists   a resubmitted run with a fresh step counter saves into the previous run's directory; its
                preemption-safe save (force=True) at step 200 finds step 200 already there
  metadata      the previous run's latest step has a truncated _CHECKPOINT_METADATA / _METADATA (a copy cut off),
                then the resumed run restores it
Survived first in both: the float64 truncation UserWarning of the config.
"""

import glob
import os
import shutil
import sys

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

from _common import note

mode = sys.argv[1]
root = f"/tmp/rec-ckpt-b21-{mode}"
shutil.rmtree(root, ignore_errors=True)
print(f"devices: {jax.devices()}")
lr = jnp.asarray(3e-4, dtype=jnp.float64)


def init_state():
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"params": {"embed": jax.random.normal(k1, (1024, 256)), "head": jax.random.normal(k2, (256, 1024))},
            "step": jnp.array(0)}


@jax.jit
def train_step(state):
    params = jax.tree.map(lambda p: p * (1 - lr), state["params"])
    return {"params": params, "step": state["step"] + 1}


def manager():
    return ocp.CheckpointManager(root, options=ocp.CheckpointManagerOptions(max_to_keep=3, save_interval_steps=100,
                                                                            create=True))


# the previous run: steps 0..250, saves at 100 and 200
state = init_state()
mngr = manager()
for step in range(1, 251):
    state = train_step(state)
    if step % 100 == 0:
        mngr.save(step, args=ocp.args.StandardSave(state))
mngr.wait_until_finished()
mngr.close()
note(f"previous run saved {sorted(int(d) for d in os.listdir(root) if d.isdigit())}")

if mode == "metadata":
    for f in glob.glob(os.path.join(root, "200", "**", "_*METADATA"), recursive=True):
        data = open(f, "rb").read()
        with open(f, "wb") as fh:
            fh.write(data[: len(data) // 3])
        note(f"truncated {f} to {len(data) // 3} of {len(data)} bytes")
    print(f"resuming from {root}")
    mngr = manager()
    latest = mngr.latest_step()
    print(f"latest checkpoint step: {latest}")
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, init_state())
    state = mngr.restore(latest, args=ocp.args.StandardRestore(abstract))
    print(f"restored step {latest}")
    sys.exit(0)

# step-exists: the new run does not restore; its step counter starts at 0 again
print(f"starting training, checkpoint dir {root}")
mngr = manager()
state = init_state()
for step in range(1, 230):
    state = train_step(state)
    if step % 25 == 0:
        print(f"step {step} loss {float(jnp.abs(state['params']['head']).mean()):.6f}")
    if step % 100 == 0:
        print(f"saving checkpoint at step {step} (preemption-safe, force=True)")
        mngr.save(step, args=ocp.args.StandardSave(state), force=True)
        mngr.wait_until_finished()
print("done")
