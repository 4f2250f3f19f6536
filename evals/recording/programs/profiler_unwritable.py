"""A profiler trace requested into a read-only directory: the program reports the failure and trains on."""

import logging
import os
import shutil

import jax
import jax.numpy as jnp

from _common import note

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
trace_dir = "/tmp/rec-profile-ro"
shutil.rmtree(trace_dir, ignore_errors=True)
os.makedirs(trace_dir)
os.chmod(trace_dir, 0o555)
note(f"{trace_dir} made read-only (mode 555, uid {os.getuid()})")
print(f"devices: {jax.devices()}")


@jax.jit
def train_step(w, x):
    loss, g = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * g, loss


w = jnp.ones((1024, 1024)) * 0.01
tracing = False
for step in range(12):
    if step == 3:
        try:
            jax.profiler.start_trace(os.path.join(trace_dir, "plugins"))
            tracing = True
            log.info("profiler trace started at step %d into %s", step, trace_dir)
        except Exception as e:  # the job must not die for a profile
            log.warning("could not start the profiler trace: %s: %s", type(e).__name__, e)
    w, loss = train_step(w, jnp.full((256, 1024), 0.1 * (step + 1)))
    print(f"step {step} loss {float(loss):.6f}")
    if step == 6 and tracing:
        try:
            jax.profiler.stop_trace()
            log.info("profiler trace stopped at step %d", step)
        except Exception as e:  # the job must not die for a profile
            log.warning("could not write the profiler trace: %s: %s", type(e).__name__, e)
print("training done")
