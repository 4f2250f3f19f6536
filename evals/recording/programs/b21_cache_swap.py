"""Persistent compilation cache whose entries hold the wrong executables (b21): a first run fills the cache at
$JAX_COMPILATION_CACHE_DIR; then a cache-warming script copies entries under the wrong keys, as one that matches
entries by function name only would: the two 'jit_train_step' entries (batch 128 and the epoch's short last batch
of 96) trade executables. A second run (the restarted container) reads the cache. Both runs' output is recorded.

  swap     fill, swap, restart (the failure)
  warm     fill, restart with the cache as it was (healthy: the restart's cache hits)
  child    one run: train 10 steps (batch 128), an eval (batch 512), the epoch's last batch (96)
"""

import os
import shutil
import subprocess
import sys

from _common import child_kwargs, exit_code, note

path = os.environ["JAX_COMPILATION_CACHE_DIR"]

if sys.argv[1] == "child":
    import jax
    import jax.numpy as jnp

    print(f"devices: {jax.devices()}")
    print(f"compilation cache: {jax.config.jax_compilation_cache_dir}")

    @jax.jit
    def train_step(w, x):
        loss, g = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.1 * g, loss

    @jax.jit
    def eval_step(w, x):
        return jnp.mean(jnp.tanh(x @ w), axis=1)

    w = jnp.ones((1024, 1024)) * 0.01
    for i in range(11):
        batch = 96 if i == 10 else 128
        w, loss = train_step(w, jnp.full((batch, 1024), float(i + 1) / 12))
        print(f"step {i} batch {batch} loss {float(loss):.6f}")
        if i == 9:
            print(f"eval mean {float(eval_step(w, jnp.ones((512, 1024))).mean()):.6f}")
    print("done")
    sys.exit(0)

shutil.rmtree(path, ignore_errors=True)
os.makedirs(path)
me = os.path.abspath(__file__)
note("first run: fills the cache")
first = subprocess.run([sys.executable, me, "child"], timeout=40, **child_kwargs())
note(f"first run exited with {exit_code(first.returncode)}")
entries = sorted(f for f in os.listdir(path) if f.endswith("-cache"))
note("entries: " + ", ".join(f"{e}={os.path.getsize(os.path.join(path, e))}B" for e in entries))
train = [e for e in entries if e.startswith("jit_train_step")]
if sys.argv[1] == "warm":
    note("warm: cache left as it is")
elif len(train) >= 2:
    a, b = os.path.join(path, train[0]), os.path.join(path, train[1])
    da, db = open(a, "rb").read(), open(b, "rb").read()
    open(a, "wb").write(db)
    open(b, "wb").write(da)
    note(f"swapped the contents of {train[0]} and {train[1]}")
else:
    note("could not find both entries; nothing swapped")
note("second run: the restart reads the cache")
second = subprocess.run([sys.executable, me, "child"], timeout=40, **child_kwargs())
note(f"second run exited with {exit_code(second.returncode)}")
sys.exit(exit_code(second.returncode))
