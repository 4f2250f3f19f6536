"""Batch-22 training loops on the TPU (Python logging on stderr, as absl/logging trainers print their step lines).

Modes (argv[1]):
  healthy-profile  30 steps at ~1 s with jax_log_compiles on, a float64 input JAX truncates (UserWarning), a
                   profiler trace of steps 8-12 and a smaller eval batch (one recompile): loud, no failure
  healthy-cache    24 steps with a jax.debug.print of the loss in the step (a host callback) and the persistent
                   compilation cache on (env), then the caches cleared and the step compiled again: loud, no failure
  user-shape       the float64 UserWarning, 12 good steps, then an eval whose labels come from a batch of another
                   size: TypeError (incompatible shapes for broadcasting)
  stall-input      a loader thread feeds batches from a pipe whose writer stops after 8 batches without closing it;
                   the loop blocks in queue.get(); faulthandler dumps every thread's stack every 8 s (never exits)
  sigterm          a child trains; after its 6th step the parent (as the kubelet would) sends it SIGTERM
  double-free      6 steps, then native code frees the same heap block twice: glibc aborts (SIGABRT)
"""

import os
import queue
import signal
import subprocess
import sys
import threading
import time

from _common import child_kwargs, exit_code, note, small_regression, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "healthy-profile"

if mode == "sigterm":  # the parent: start the trainer, wait for step 6, send SIGTERM from outside the process
    child = subprocess.Popen([sys.executable, __file__, "sigterm-child"], stdout=subprocess.PIPE,
                             stderr=None, text=True, **child_kwargs())
    for line in child.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("step 6 "):
            time.sleep(0.4)
            note(f"parent pid {os.getpid()} sends SIGTERM to trainer pid {child.pid}")
            child.send_signal(signal.SIGTERM)
    child.wait()
    note(f"trainer exited with {exit_code(child.returncode)}")
    sys.exit(exit_code(child.returncode))

import jax
import jax.numpy as jnp
import numpy as np

log = trainer_logger()
if mode == "healthy-profile":
    jax.config.update("jax_log_compiles", True)
log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression()

if mode in ("healthy-profile", "user-shape"):
    # a preprocessing constant built in float64 by numpy: JAX (x64 off) truncates it and warns
    scale = jnp.asarray(np.full((512,), 0.5, dtype=np.float64), dtype=jnp.float64)
else:
    scale = jnp.ones((512,))

if mode == "healthy-cache":
    _inner_step = train_step

    @jax.jit
    def train_step(p, x, y):  # noqa: F811 - the same step with a host-callback print of the loss
        p2, loss = _inner_step(p, x, y)
        jax.debug.print("train loss {l:.5f}", l=loss)
        return p2, loss


@jax.jit
def eval_step(p, x, y):
    return loss_fn(p, x, y)


def run(steps, get_batch, t0, first=0):
    global params
    for step in range(first, first + steps):
        x, y = get_batch(step)
        params, loss = train_step(params, x * scale, y)
        if mode == "sigterm-child":
            print(f"step {step} loss {float(loss):.6f}", flush=True)
        else:
            log.info("step %d loss %.6f", step, float(loss))
        if mode == "healthy-profile" and step == 8:
            try:
                jax.profiler.start_trace("/tmp/rec-b22-profile")
                log.info("profiler trace started at step %d", step)
            except Exception as e:  # the trainer logs and goes on, as real ones do
                log.warning("could not start profiler trace: %r", e)
        if mode == "healthy-profile" and step == 12:
            try:
                jax.profiler.stop_trace()
                log.info("profiler trace written to /tmp/rec-b22-profile")
            except Exception as e:
                log.warning("could not stop profiler trace: %r", e)
        if mode == "healthy-profile" and step in (20, 28):
            xe, ye = batch(1000 + step, rows=96)
            log.info("eval at step %d: loss %.6f", step, float(eval_step(params, xe, ye)))
        if mode == "user-shape" and step == 11:
            xe, _ = batch(1000 + step, rows=200)
            _, ye = batch(2000 + step, rows=256)  # labels from the previous (full-size) eval batch
            log.info("running eval at step %d", step)
            log.info("eval loss %.6f", float(eval_step(params, xe, ye)))
        time.sleep(max(0.0, (step + 1 - first) * 1.0 - (time.time() - t0)))


t0 = time.time()
if mode == "stall-input":
    import faulthandler

    faulthandler.dump_traceback_later(8, repeat=True)  # the trainer's own hang watchdog
    r, w = os.pipe()
    q: queue.Queue = queue.Queue(maxsize=2)

    def producer():  # stands in for the remote reader: writes 8 records, then stops writing, never closes
        for i in range(8):
            os.write(w, i.to_bytes(4, "little"))
            time.sleep(0.9)
        note("producer stopped writing (pipe left open)")
        time.sleep(3600)

    def loader():
        while True:
            rec = os.read(r, 4)
            q.put(int.from_bytes(rec, "little"))

    threading.Thread(target=producer, name="shard-reader", daemon=True).start()
    threading.Thread(target=loader, name="input-pipeline", daemon=True).start()
    step = 0
    while True:
        i = q.get()
        x, y = batch(i)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        step += 1
elif mode == "double-free":
    import ctypes

    run(6, batch, t0)
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    note("freeing one 48-byte heap block twice")
    p = libc.malloc(48)
    libc.free(p)
    libc.free(p)
    note("no abort after the double free")
    sys.exit(0)
elif mode == "healthy-cache":
    run(12, batch, t0)
    log.info("clearing in-memory caches; the step will be compiled again")
    jax.clear_caches()
    run(12, batch, time.time(), first=12)
elif mode == "sigterm-child":
    run(40, batch, t0)
else:
    run({"healthy-profile": 30, "user-shape": 14}[mode], batch, t0)
log.info("training done in %.1fs", time.time() - t0)
