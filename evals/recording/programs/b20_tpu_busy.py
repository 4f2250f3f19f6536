"""The chip held by a previous process: a holder trains on the TPU; a second process (JAX_PLATFORMS=tpu) then starts
twice: with ALLOW_MULTIPLE_LIBTPU_LOAD=1 (libtpu skips its lockfile and tries the device itself) and without.

The holder's own output goes to /tmp/rec-b20-holder.log (it is not the failure); the second process is the recording.
"""

import subprocess
import sys
import time

from _common import exit_code, note, note_env

HOLDER = """
import time, jax, jax.numpy as jnp
x = jnp.ones((1024, 1024)); x.block_until_ready()
print("HOLDING", flush=True)
for i in range(120):
    x = (x @ x) / 1024.0; x.block_until_ready(); time.sleep(1)
"""
SECOND = """
import jax, jax.numpy as jnp
print(f"devices: {jax.devices()}")
print(f"sum: {float(jnp.ones((1024, 1024)).sum())}")
"""
LOG = "/tmp/rec-b20-holder.log"

env = note_env()
with open(LOG, "w") as log:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=log, stderr=subprocess.STDOUT, env=env)
note(f"holder pid {holder.pid} started")
codes = []
try:
    t0 = time.monotonic()
    while time.monotonic() - t0 < 45 and holder.poll() is None:
        with open(LOG, errors="replace") as f:
            if "HOLDING" in f.read():
                break
        time.sleep(0.5)
    note(f"holder {'holds the chip' if holder.poll() is None else f'exited with {holder.returncode}'} "
         f"after {time.monotonic() - t0:.1f}s")
    for label, extra in (("ALLOW_MULTIPLE_LIBTPU_LOAD=1", {"ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "JAX_PLATFORMS": "tpu"}),
                         ("JAX_PLATFORMS=tpu", {"JAX_PLATFORMS": "tpu"})):
        note(f"second process ({label}) starts")
        try:
            r = subprocess.run([sys.executable, "-c", SECOND], env={**env, **extra}, timeout=25)
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
