"""The chip held by another process: a holder opens the TPU and waits; a second process then tries to use it.

The holder's own output goes to /tmp/rec-holder.log (it is not the failure); the second process's output is the
recording. The second process starts twice: with JAX's default platforms and with JAX_PLATFORMS=tpu.
"""

import subprocess
import sys
import time

from _common import exit_code, note, note_env

HOLDER = """
import time, jax, jax.numpy as jnp
x = jnp.ones((1024, 1024)); x.block_until_ready()
print("HOLDING", flush=True)
time.sleep(120)
"""
SECOND = """
import jax, jax.numpy as jnp
print(f"devices: {jax.devices()}")
print(f"sum: {float(jnp.ones((1024, 1024)).sum())}")
"""
LOG = "/tmp/rec-holder.log"

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
    for label, extra in (("default platforms", {}), ("JAX_PLATFORMS=tpu", {"JAX_PLATFORMS": "tpu"})):
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
