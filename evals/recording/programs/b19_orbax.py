"""Orbax checkpointing on the TPU, new failure modes and a noisy healthy resume:

  healthy-resume  attempt 1 trains and saves steps 0, 4, 8 and leaves an unfinished save of step 12 behind (a
                  '12.orbax-checkpoint-tmp-*' directory, as a pod killed mid-save does); attempt 2 (same process,
                  absl INFO logging on as under an absl app) opens the manager, which cleans the tmp directory up,
                  restores step 8 and trains on with async saves at 12 and 16
  shape-mismatch  save a model with hidden width 512, restore into a model whose hidden width is now 1024
  missing-data    save, delete the OCDBT data files ('d/' under the step) as a lifecycle rule or partial copy would,
                  then restore
"""

import os
import shutil
import sys
import time

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

from _common import note

mode = sys.argv[1]
root = f"/tmp/rec-ckpt-b19-{mode}"
shutil.rmtree(root, ignore_errors=True)
print(f"devices: {jax.devices()}")


def init_state(hidden=512):
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"params": {"dense_0": {"kernel": jax.random.normal(k1, (256, hidden)), "bias": jnp.zeros(hidden)},
                       "dense_1": {"kernel": jax.random.normal(k2, (hidden, 10)), "bias": jnp.zeros(10)}},
            "step": jnp.array(0)}


@jax.jit
def train_step(state):
    params = jax.tree.map(lambda p: p * 0.999, state["params"])
    return {"params": params, "step": state["step"] + 1}


def manager(directory, **kw):
    return ocp.CheckpointManager(directory, options=ocp.CheckpointManagerOptions(max_to_keep=3, create=True, **kw))


def loss_of(state):
    return float(jnp.abs(state["params"]["dense_1"]["kernel"]).mean())


if mode == "healthy-resume":
    state = init_state()
    mngr = manager(root)
    for step in range(10):
        if step % 4 == 0:
            mngr.save(step, args=ocp.args.StandardSave(state))
        state = train_step(state)
        print(f"step {step} loss {loss_of(state):.6f}")
    mngr.wait_until_finished()
    mngr.close()
    tmp = os.path.join(root, f"12.orbax-checkpoint-tmp-{int(time.time() * 1e6)}")
    shutil.copytree(os.path.join(root, "8"), tmp)
    for d, _, files in os.walk(tmp):
        for f in files:
            if f.startswith("_CHECKPOINT_METADATA") or f == "commit_success.txt":
                os.remove(os.path.join(d, f))
    note(f"attempt 1 over; left {os.path.basename(tmp)} as an interrupted save; attempt 2 starts with absl INFO logs")
    from absl import logging as alog
    alog.set_verbosity(alog.INFO)
    alog.use_absl_handler()
    print(f"starting training (attempt 2), checkpoint dir {root}")
    mngr = manager(root, cleanup_tmp_directories=True)
    print(f"checkpoints found: {mngr.all_steps()}")
    latest = mngr.latest_step()
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, init_state())
    state = mngr.restore(latest, args=ocp.args.StandardRestore(abstract))
    print(f"resumed from step {latest}")
    for step in range(latest + 1, 18):
        state = train_step(state)
        if step % 4 == 0:
            mngr.save(step, args=ocp.args.StandardSave(state))
        print(f"step {step} loss {loss_of(state):.6f}")
        time.sleep(0.3)
    mngr.wait_until_finished()
    print(f"checkpoints on disk: {mngr.all_steps()}")
    print("training done")
    sys.exit(0)

state = init_state()
mngr = manager(root)
for step in range(6):
    if step in (0, 5):
        print(f"saving checkpoint at step {step} to {root}")
        mngr.save(step, args=ocp.args.StandardSave(state))
    state = train_step(state)
    print(f"step {step} loss {loss_of(state):.6f}")
mngr.wait_until_finished()
print(f"checkpoints on disk: {mngr.all_steps()}")

if mode == "shape-mismatch":
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, init_state(hidden=1024))
    print("restoring step 5 into a model with hidden width 1024")
    restored = mngr.restore(5, args=ocp.args.StandardRestore(abstract))
elif mode == "missing-data":
    removed = []
    for d, _, files in os.walk(os.path.join(root, "5")):
        if os.path.basename(d) == "d":
            for f in files:
                removed.append(os.path.relpath(os.path.join(d, f), root))
                os.remove(os.path.join(d, f))
    note(f"data files removed: {len(removed)} ({', '.join(removed[:4])})")
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, state)
    mngr = manager(root)
    print("restoring step 5")
    restored = mngr.restore(5, args=ocp.args.StandardRestore(abstract))
print("restore done")
