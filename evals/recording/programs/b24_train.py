"""Batch-24 training loops on the TPU (Python logging on stderr, as absl/logging trainers print their step lines).

Modes (argv[1]):
  healthy-explain   28 steps with jax_explain_cache_misses on; every 7th batch is a short tail batch (recompile,
                    explained as a tracing cache miss), an eval step at 10 and 20: loud, no failure
  healthy-transfer  24 steps with jax_transfer_guard=log (every implicit host-to-device transfer logged), a NumPy
                    float16 overflow RuntimeWarning in the host-side metrics and a grad-norm warning: loud, no failure
  user-concat       a 16 MiB NumPy table and a constant product closed over by the step (XLA folds it at compile),
                    12 good steps, then feature assembly concatenates a rank-1 bias onto rank-2 activations: TypeError
  stall-callback    an io_callback in the step records metrics under a lock; at step 10 the checkpoint thread's
                    lock is held by the loop itself while it waits for the step: deadlock, no output (killed)
  spot-sigterm      a child runs ~1.5 s steps; the parent sends SIGTERM in the middle of step 7's execution
  crash-sigfpe      6 steps, then a native metrics helper divides an integer by zero: SIGFPE
"""

import os
import signal
import subprocess
import sys
import threading
import time

from _common import child_kwargs, exit_code, note, small_regression, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "healthy-explain"

if mode == "spot-sigterm":  # the parent: start the trainer, SIGTERM it while step 7 runs on the chip
    child = subprocess.Popen([sys.executable, __file__, "spot-child"], stdout=subprocess.PIPE,
                             stderr=None, text=True, **child_kwargs())
    for line in child.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("launching step 7"):
            time.sleep(0.5)
            note(f"parent pid {os.getpid()} sends SIGTERM to trainer pid {child.pid} during step 7")
            child.send_signal(signal.SIGTERM)
    child.wait()
    note(f"trainer exited with {exit_code(child.returncode)}")
    sys.exit(exit_code(child.returncode))

import jax
import jax.numpy as jnp
import numpy as np

log = trainer_logger()
if mode == "healthy-explain":
    jax.config.update("jax_explain_cache_misses", True)
if mode == "healthy-transfer":
    jax.config.update("jax_transfer_guard", "log")
log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression(seed=24)


@jax.jit
def eval_step(p, x, y):
    return loss_fn(p, x, y)


def pace(step, t0, period=0.6):
    time.sleep(max(0.0, (step + 1) * period - (time.time() - t0)))


t0 = time.time()
if mode == "healthy-explain":
    for step in range(28):
        x, y = batch(step, rows=160 if step % 7 == 6 else 256)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        if step in (10, 20):
            xe, ye = batch(5000 + step, rows=64)
            log.info("eval at step %d: loss %.6f", step, float(eval_step(params, xe, ye)))
        pace(step, t0)
elif mode == "healthy-transfer":
    lr_scale = np.float32(1.0)
    for step in range(24):
        xh = np.asarray(jax.random.normal(jax.random.key(step), (256, 512)))  # host-side batch (NumPy)
        yh = xh[:, :1] * 0.1
        params, loss = train_step(params, xh * lr_scale, yh)  # implicit host-to-device transfers
        lv = float(loss)
        if step == 9:
            # host metrics packed as float16 for the dashboard: a too-large value overflows (NumPy RuntimeWarning)
            packed = np.array([lv, 1e6 * (1 + lv)], dtype=np.float32).astype(np.float16)
            log.info("metrics packed: %s", packed.tolist())
        if step == 15:
            log.warning("grad norm %.2f above clip threshold 1.00 at step %d; clipping", 3.17, step)
        log.info("step %d loss %.6f", step, lv)
        pace(step, t0)
elif mode == "user-concat":
    pos_table = (0.05 * np.random.default_rng(0).standard_normal((8192, 512))).astype(np.float32)  # 16 MiB, host NumPy

    proj_np = np.random.default_rng(1).standard_normal((1024, 512)).astype(np.float32) / 32

    @jax.jit
    def embed_step(p, x, y):
        # closes over NumPy arrays: constants in the program, and a constant product XLA folds at compile time
        pos = jnp.asarray(pos_table[:1024].T) @ jnp.asarray(proj_np)
        x = x + jnp.asarray(pos_table)[: x.shape[0]] + 0.01 * pos[: x.shape[0]]
        return train_step(p, x, y)

    for step in range(14):
        x, y = batch(step)
        params, loss = embed_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        if step == 11:
            log.info("assembling eval features at step %d", step)
            xe, ye = batch(7000 + step)
            bias = jnp.zeros((512,))
            feats = jnp.concatenate([xe, bias], axis=-1)
            log.info("eval loss %.6f", float(eval_step(params, feats[:, :512], ye)))
        pace(step, t0)
elif mode == "stall-callback":
    from jax.experimental import io_callback

    metrics_lock = threading.Lock()
    history: list[float] = []

    def record(loss):
        with metrics_lock:
            history.append(float(loss))
        return np.int32(len(history))

    @jax.jit
    def step_with_metrics(p, x, y):
        p, loss = train_step(p, x, y)
        n = io_callback(record, jax.ShapeDtypeStruct((), np.int32), loss, ordered=True)
        return p, loss, n

    step = 0
    while True:
        x, y = batch(step)
        if step == 10:
            log.info("step %d: snapshotting metrics history for the checkpoint", step)
            metrics_lock.acquire()  # held until the checkpoint thread is done ... which waits for this step
            note("main thread holds metrics_lock while it waits for step 10 (deadlock)")
        params, loss, n = step_with_metrics(params, x, y)
        log.info("step %d loss %.6f (metrics %d)", step, float(loss), int(n))
        step += 1
        pace(step - 1, t0)
elif mode == "spot-child":
    @jax.jit
    def long_step(p, x, y):
        p, loss = train_step(p, x, y)
        a = jnp.full((4096, 4096), 1e-4, jnp.float32) + loss
        a = jax.lax.fori_loop(0, 160, lambda i, m: jnp.tanh(m @ m), a)  # ~1-2 s of chip time
        return p, loss + 0.0 * a[0, 0]

    for step in range(40):
        x, y = batch(step)
        print(f"launching step {step}", flush=True)
        params, loss = long_step(params, x, y)
        print(f"step {step} loss {float(loss):.6f} ({time.time() - t0:.1f}s)", flush=True)
elif mode == "crash-sigfpe":
    import ctypes
    import shutil

    src = "/tmp/rec-b24-metrics.c"
    lib = "/tmp/rec-b24-metrics.so"
    with open(src, "w") as f:
        f.write("int tokens_per_example(volatile int tokens, volatile int examples) { return tokens / examples; }\n")
    cc = shutil.which("gcc") or shutil.which("cc")
    rc = subprocess.run([cc, "-shared", "-fPIC", "-O0", "-o", lib, src]).returncode if cc else -1
    note(f"compiled the native metrics helper with {cc}: rc {rc}")
    helper = ctypes.CDLL(lib)
    for step in range(8):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        examples = 0 if step == 6 else 256  # an empty shard at step 6
        log.info("step %d loss %.6f", step, float(loss))
        if step == 6:
            note("calling tokens_per_example(131072, 0)")
        log.info("tokens/example %d", helper.tokens_per_example(131072, examples))
        pace(step, t0)
    note("no SIGFPE")
log.info("training done in %.1fs", time.time() - t0)
