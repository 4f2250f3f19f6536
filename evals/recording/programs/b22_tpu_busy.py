"""The chip held by a colocated-Python-style process on the same host: a 'sidecar' process imports JAX with the
default platforms (JAX_PLATFORMS unset), so JAX opens the TPU and keeps it; a 'worker' process then starts on the
same host with JAX_PLATFORMS=tpu, first with ALLOW_MULTIPLE_LIBTPU_LOAD=1 (libtpu opens the device itself, as a
process in another container with its own /tmp would) and then without it (the shared libtpu lockfile).

Both processes write to the recording: the holder's start-up first, then the second process's failures.
"""

import subprocess
import sys
import time

from _common import child_kwargs, exit_code, note

SIDECAR = """
import time, jax, jax.numpy as jnp
print(f"colocated sidecar: warming embedding cache on {jax.devices()}", flush=True)
x = jnp.ones((2048, 256)); x.block_until_ready()
print("colocated sidecar: embedding cache ready (2048 x 256)", flush=True)
for i in range(120):
    time.sleep(1)
"""
WORKER = """
import jax, jax.numpy as jnp
print(f"devices: {jax.devices()}")
print(f"sum: {float(jnp.ones((1024, 1024)).sum())}")
"""

kw = child_kwargs()
env = {k: v for k, v in kw.pop("env").items() if k != "JAX_PLATFORMS"}
holder = subprocess.Popen([sys.executable, "-c", SIDECAR], stdout=subprocess.PIPE, stderr=None, text=True,
                          env=env, **kw)
note(f"sidecar-like holder pid {holder.pid} started (JAX_PLATFORMS unset)")
codes = []
try:
    t0 = time.monotonic()
    for line in holder.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if "ready" in line or time.monotonic() - t0 > 45:
            break
    note(f"holder {'holds the chip' if holder.poll() is None else f'exited with {holder.returncode}'} "
         f"after {time.monotonic() - t0:.1f}s")
    for label, extra in (("ALLOW_MULTIPLE_LIBTPU_LOAD=1", {"ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "JAX_PLATFORMS": "tpu"}),
                         ("JAX_PLATFORMS=tpu", {"JAX_PLATFORMS": "tpu"})):
        note(f"second process ({label}) starts")
        try:
            r = subprocess.run([sys.executable, "-c", WORKER], env={**env, **extra}, timeout=25,
                               pass_fds=kw.get("pass_fds", ()))
            codes.append(exit_code(r.returncode))
            note(f"second process ({label}) exited with {codes[-1]}")
        except subprocess.TimeoutExpired:
            codes.append(124)
            note(f"second process ({label}) killed after 25s")
finally:
    holder.terminate()
    try:
        holder.wait(timeout=10)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder.wait()
    note(f"holder exited with {exit_code(holder.returncode)}")
sys.exit(next((c for c in reversed(codes) if c), 0))
