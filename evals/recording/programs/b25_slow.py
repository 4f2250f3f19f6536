"""Batch-25 runs that only look stuck on the TPU: a watchdog fires during a long phase, then the steps resume.

Real jitted steps of the small MLP of _common.py (Python logging on stderr); both modes finish with exit 0.

Modes (argv[1]):
  long-eval   30 train steps with faulthandler.dump_traceback_later(5 s, repeat=True) re-armed after every train
              step; at step 12 an eval over 36 batches of a heavier eval step (~12 s) runs without re-arming it, so
              faulthandler dumps the stacks twice (the main thread in the eval loop); then training resumes
  slow-ckpt   30 train steps; at step 10 a synchronous checkpoint of ~200 MiB is written through a rate-limited
              writer (25 MiB/s, as a throttled upload to a bucket); a watchdog thread logs 'no step completed for
              N s' with a py-spy style thread dump at 8 s and a heartbeat every 4 s; then training resumes
"""

import faulthandler
import os
import sys
import threading
import time
import traceback

import jax
import jax.numpy as jnp
import numpy as np

from _common import small_regression, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "long-eval"
log = trainer_logger()
log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression(seed=250)
STEPS = 30


def pace(step, t0, period=0.3):
    time.sleep(max(0.0, (step + 1) * period - (time.time() - t0)))


def thread_dump(reason):
    names = {t.ident: t.name for t in threading.enumerate()}
    out = [f"Thread dump ({reason}), pid {os.getpid()}:"]
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        out.append(f'Thread 0x{ident:x} "{names.get(ident, "?")}" (most recent call first):')
        for fs in reversed(traceback.extract_stack(frame)):
            out.append(f"    {fs.name} ({fs.filename}:{fs.lineno})")
            if fs.line:
                out.append(f"        {fs.line}")
    return "\n".join(out)


t0 = time.time()
if mode == "long-eval":
    @jax.jit
    def eval_step(p, x, y):
        a = jnp.tanh(x @ x.T / 512.0)
        a = jax.lax.fori_loop(0, 60, lambda i, m: jnp.tanh(m @ m / 1024.0), a)  # a heavy per-batch metric
        return loss_fn(p, x, y), jnp.mean(a)

    def run_eval(p, n=36):
        total, t_e = 0.0, time.time()
        for i in range(n):
            x, y = batch(50000 + i, rows=1024)
            loss, _ = eval_step(p, x, y)
            total += float(loss)
            time.sleep(max(0.0, (i + 1) * 0.33 - (time.time() - t_e)))
        return total / n, time.time() - t_e

    faulthandler.dump_traceback_later(5, repeat=True)
    for step in range(STEPS):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        if step == 12:
            log.info("eval at step %d: 36 batches", step)
            ev, dt = run_eval(params)
            log.info("eval at step %d: loss %.6f (36 batches in %.1fs)", step, ev, dt)
        faulthandler.dump_traceback_later(5, repeat=True)
        pace(step, t0)
    faulthandler.cancel_dump_traceback_later()

elif mode == "slow-ckpt":
    state = {"step": -1, "t": time.time(), "phase": "train"}

    def watchdog():
        dumped, last_beat = 0.0, time.time()
        while True:
            time.sleep(1)
            age = time.time() - state["t"]
            if time.time() - last_beat >= 4:
                log.info("heartbeat: alive, phase %s, last step %d, %.0fs ago", state["phase"], state["step"], age)
                last_beat = time.time()
            if age > 8 and time.time() - dumped > 8:
                log.warning("watchdog: no step completed for %.0fs\n%s", age, thread_dump(f"{age:.0f}s without a step"))
                dumped = time.time()

    def throttled_write(path, data, rate=16 * 2 ** 20, chunk=4 * 2 ** 20):
        with open(path, "wb") as f:
            t_w = time.time()
            for off in range(0, len(data), chunk):
                f.write(data[off:off + chunk])
                time.sleep(max(0.0, (off + chunk) / rate - (time.time() - t_w)))
            f.flush()
            os.fsync(f.fileno())

    def save_checkpoint(step, p):
        d = f"/tmp/rec-b25-slowckpt/step_{step:06d}"
        os.makedirs(d, exist_ok=True)
        opt_state = np.random.default_rng(step).standard_normal((48, 2 ** 20)).astype(np.float32)  # 192 MiB
        blobs = {k: np.asarray(v).tobytes() for k, v in p.items()} | {"opt_state": opt_state.tobytes()}
        t_s = time.time()
        for name, data in blobs.items():
            throttled_write(f"{d}/{name}.bin", data)
        return sum(len(b) for b in blobs.values()), time.time() - t_s

    threading.Thread(target=watchdog, name="step-watchdog", daemon=True).start()
    for step in range(STEPS):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        state.update(step=step, t=time.time())
        if step == 10:
            state["phase"] = "checkpoint"
            log.info("checkpoint: saving step %d to /tmp/rec-b25-slowckpt/step_%06d", step, step)
            size, dt = save_checkpoint(step, params)
            log.info("checkpoint: step %d saved, %.1f MiB in %.1fs", step, size / 2 ** 20, dt)
            state["phase"] = "train"
        pace(step, t0)
log.info("training done: %d steps in %.1fs", STEPS, time.time() - t0)
