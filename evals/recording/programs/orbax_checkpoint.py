"""Orbax checkpointing on the TPU: 'healthy' saves and restores; the other modes provoke one failure each.

  healthy           train 11 steps, save at 0, 5 and 10, restore the latest
  missing-step      save steps 0 and 5, restore step 500
  tree-mismatch     save, then restore into a target whose layers are renamed and added to
  corrupt-manifest  save, overwrite every OCDBT manifest file with garbage, restore
  unwritable        save into a directory without write permission (known not to return: the harness kills it)
"""

import os
import shutil
import sys

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

from _common import note

mode = sys.argv[1]
root = f"/tmp/rec-ckpt-{mode}"
shutil.rmtree(root, ignore_errors=True)
print(f"devices: {jax.devices()}")
print(f"orbax-checkpoint {getattr(ocp, '__version__', '?')}")


def init_state():
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"params": {"dense_0": {"kernel": jax.random.normal(k1, (256, 512)), "bias": jnp.zeros(512)},
                       "dense_1": {"kernel": jax.random.normal(k2, (512, 10)), "bias": jnp.zeros(10)}},
            "step": jnp.array(0)}


@jax.jit
def train_step(state):
    params = jax.tree.map(lambda p: p * 0.999, state["params"])
    return {"params": params, "step": state["step"] + 1}


def manager(directory):
    return ocp.CheckpointManager(directory, options=ocp.CheckpointManagerOptions(max_to_keep=3, create=True))


def train_and_save(directory, steps, save_at):
    state = init_state()
    mngr = manager(directory)
    for step in range(steps):
        if step in save_at:
            print(f"saving checkpoint at step {step} to {directory}")
            mngr.save(step, args=ocp.args.StandardSave(state))
        state = train_step(state)
        print(f"step {step} loss {float(jnp.abs(state['params']['dense_1']['kernel']).mean()):.6f}")
    mngr.wait_until_finished()
    print(f"checkpoints on disk: {mngr.all_steps()}")
    return mngr, state


if mode == "unwritable":
    os.makedirs(root)
    os.chmod(root, 0o555)
    note(f"{root} made read-only (mode 555, uid {os.getuid()})")
    state = init_state()
    mngr = ocp.CheckpointManager(root, options=ocp.CheckpointManagerOptions(max_to_keep=3))
    print(f"saving checkpoint at step 0 to {root}")
    mngr.save(0, args=ocp.args.StandardSave(state))
    mngr.wait_until_finished()
    print("saved")
    sys.exit(0)

mngr, state = train_and_save(root, 11 if mode == "healthy" else 6, {0, 5, 10})
abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, state)
if mode == "healthy":
    step = mngr.latest_step()
    restored = mngr.restore(step, args=ocp.args.StandardRestore(abstract))
    print(f"restored step {step}: state step {int(restored['step'])}")
elif mode == "missing-step":
    print("restoring step 500")
    restored = mngr.restore(500, args=ocp.args.StandardRestore(abstract))
elif mode == "tree-mismatch":
    params = dict(abstract["params"])
    params["mlp_in"] = params.pop("dense_0")
    params["dense_2"] = jax.ShapeDtypeStruct((10, 10), jnp.float32)
    print(f"restoring step 5 into a model with layers {sorted(params)}")
    restored = mngr.restore(5, args=ocp.args.StandardRestore({"params": params, "step": abstract["step"]}))
elif mode == "corrupt-manifest":
    damaged = []
    for d, _, files in os.walk(os.path.join(root, "5")):
        for f in files:
            if f.startswith("manifest"):
                p = os.path.join(d, f)
                size = os.path.getsize(p)
                with open(p, "r+b") as fh:
                    fh.write(b"\x00\xff" * max(8, size // 2))
                damaged.append(f"{os.path.relpath(p, root)}={size}B")
    note(f"manifest files overwritten: {', '.join(damaged) or 'none found'}")
    print("restoring step 5")
    mngr = manager(root)
    restored = mngr.restore(5, args=ocp.args.StandardRestore(abstract))
print("restore done")
