"""Batch-26 healthy runs that look alarming: real error text the program handles, then training goes on.

Real jitted steps of the small MLP of _common.py (Python logging on stderr).

Modes (argv[1]):
  upload-survived  at step 3 the optional TensorBoard event upload into a read-only directory (standing in for a
                   mounted bucket) fails: ERROR with its PermissionError traceback, "optional, continuing"; the eval
                   at step 12 and all 30 steps run; the run ends (exit 0)
  retry-skip    the reader waits for shard 00002 that the upstream preprocessing job is still writing: "not found,
                retrying in 2 s (attempt N/10)" twice, then it appears; at step 9 a batch with a non-finite feature
                gives a nan loss and the loss guard skips the update ("skipping update: non-finite loss"); training
                keeps stepping until the harness's timeout kills it (still stepping at export)
"""

import os
import shutil
import sys
import threading
import time
import traceback

from _common import note, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "upload-survived"
STEPS = 30
log = trainer_logger()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import small_regression  # noqa: E402

log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression(seed=2600)


def pace(step, t0, period=0.3):
    time.sleep(max(0.0, (step + 1) * period - (time.time() - t0)))


t0 = time.time()
if mode == "upload-survived":
    tb = "/tmp/rec-b26-tb-ok"
    shutil.rmtree(tb, ignore_errors=True)
    os.makedirs(tb)
    os.chmod(tb, 0o555)
    note(f"{tb} made read-only (mode 555, uid {os.getuid()})")

    def upload_events(step, loss):
        with open(f"{tb}/events.out.tfevents.{int(t0)}.trainer-0", "ab") as f:
            f.write(f"step={step} loss={loss}\n".encode())

    @jax.jit
    def eval_step(p, x, y):
        return loss_fn(p, x, y)

    for step in range(STEPS):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        if step == 3:
            try:
                upload_events(step, float(loss))
            except OSError:
                log.error("tensorboard: event upload to %s failed (optional, continuing without summaries)\n%s", tb,
                          traceback.format_exc().rstrip())
        if step == 12:
            log.info("eval at step %d: loading eval set", step)
            ev = [float(eval_step(params, *batch(90000 + i))) for i in range(4)]
            log.info("eval at step %d: loss %.6f", step, sum(ev) / len(ev))
        pace(step, t0)
    log.info("training done: %d steps in %.1fs", STEPS, time.time() - t0)

if mode == "retry-skip":
    root = "/tmp/rec-b26-shards"
    os.makedirs(root, exist_ok=True)
    for name in os.listdir(root):
        os.unlink(f"{root}/{name}")
    for i in range(2):
        np.save(f"{root}/shard-{i:05d}.npy", np.random.default_rng(i).standard_normal((8, 256, 512)).astype(np.float32))

    def upstream():  # the preprocessing job finishes shard 2 a few seconds late
        time.sleep(9)
        np.save(f"{root}/shard-00002.tmp.npy", np.random.default_rng(2).standard_normal((8, 256, 512)).astype(np.float32))
        os.rename(f"{root}/shard-00002.tmp.npy", f"{root}/shard-00002.npy")

    threading.Thread(target=upstream, name="upstream", daemon=True).start()

    def read_shard(i, attempts=10, wait=2):
        path = f"{root}/shard-{i:05d}.npy"
        for attempt in range(1, attempts + 1):
            try:
                return np.load(path)
            except FileNotFoundError as e:
                log.warning("input: %s, retrying in %d s (attempt %d/%d)", e, wait, attempt, attempts)
                time.sleep(wait)
        raise RuntimeError(f"{path} not available")

    @jax.jit
    def guarded_step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        ok = jnp.isfinite(loss)
        new = jax.tree.map(lambda a, g: jnp.where(ok, a - 0.02 * g, a), p, grads)
        return new, loss, ok

    true_w = np.asarray(jax.random.normal(jax.random.key(9), (512, 1)))
    skipped, step = 0, 0
    for shard in range(1000):
        data = read_shard(shard % 3 if shard < 3 else 2)
        log.info("input: shard %05d loaded (%d batches)", shard, len(data))
        for x in data[:8]:
            x = x.copy()
            if step == 9:
                x[11, 300] = np.nan  # one corrupt record
            params, loss, ok = guarded_step(params, x, x @ true_w / 512 ** 0.5)
            if not bool(ok):
                skipped += 1
                log.warning("loss guard: non-finite loss %s at step %d, skipping update (%d skipped in total)",
                            float(loss), step, skipped)
            else:
                log.info("step %d loss %.6f", step, float(loss))
            step += 1
            pace(step, t0)
