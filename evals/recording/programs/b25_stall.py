"""Batch-25 stalls on the TPU: training stops making progress with no error, and the program's own watchdog says where.

Every mode trains the small MLP of _common.py with real jitted steps (Python logging on stderr, as absl/logging
trainers print their step lines), then stops making progress for a different reason. No mode raises; each is killed
by the harness's timeout, except watchdog-abort, whose own watchdog aborts the process.

Modes (argv[1]):
  input-queue      a prefetch thread fills a bounded queue from a one-epoch shard list and returns at the end of the
                   epoch without a sentinel; the loop blocks in queue.get(). faulthandler.dump_traceback_later(5 s,
                   repeat=True), re-armed after every step, dumps the stacks every 5 s
  loader-killed    a multiprocessing Pool (fork, created before JAX starts) decodes the batches; the worker decoding
                   batch 9 is SIGKILLed (as the kernel's OOM killer does); Pool.imap waits for that batch forever;
                   faulthandler dumps as above
  fifo-read        the loader reads one shard file per step from a directory standing in for a gcsfuse mount; the
                   18th shard is a named pipe nobody writes, so open() blocks as a hung mount does; faulthandler dumps
  metrics-queue    an ordered io_callback hands each step's metrics to a bounded queue (maxsize 8) drained by a
                   metrics-writer thread; at step 6 an eval record without 'grad_norm' kills the writer (KeyError,
                   'Exception in thread metrics-writer'); 8 steps later the callback blocks in queue.put and the
                   loop waits on float(loss); faulthandler dumps as above
  ckpt-executor    an async checkpointer on a one-worker ThreadPoolExecutor; its save task submits the commit to the
                   same executor and waits for it (self-deadlock); at step 20 the loop waits for the save of step 10;
                   a heartbeat thread keeps logging every 3 s and a watchdog thread logs a py-spy style thread dump
                   after 8 s without a step
  watchdog-abort   a dynamic loss-scale loop (lax.while_loop until the loss is finite, halving the scale) inside the
                   step; the batch of step 12 holds an inf feature, so the loop never ends on the chip; the watchdog
                   dumps the threads at 5 s and aborts the process after 10 s without a step (SIGABRT)
"""

import faulthandler
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import traceback

from _common import note, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "input-queue"
log = trainer_logger()
DUMP_S = 5


def decode(idx):  # a loader worker: decode one batch of 256 x 512 features (NumPy only)
    import numpy as np

    if idx == 9:
        note(f"loader worker pid {os.getpid()} decoding batch 9 SIGKILLs itself (as the kernel OOM killer would)")
        os.kill(os.getpid(), signal.SIGKILL)
    rng = np.random.default_rng(idx)
    return rng.standard_normal((256, 512)).astype(np.float32)


pool = None
if mode == "loader-killed":  # fork the loader workers before JAX starts its threads
    pool = mp.get_context("fork").Pool(2)
    log.info("input: 2 decode workers started (pids %s)", [p.pid for p in pool._pool])

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import io_callback  # noqa: E402

from _common import small_regression  # noqa: E402

log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression(seed=25)
true_w = np.asarray(jax.random.normal(jax.random.key(7), (512, 1)))


def arm():
    """The per-step watchdog: stacks to stderr if no step completes within DUMP_S (re-armed after every step)."""
    faulthandler.dump_traceback_later(DUMP_S, repeat=True)


def pace(step, t0, period=0.3):
    time.sleep(max(0.0, (step + 1) * period - (time.time() - t0)))


def thread_dump(reason):
    """A py-spy style dump of every Python thread, most recent call first, with the source line."""
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


def host_batch(step):
    x = np.random.default_rng(step).standard_normal((256, 512)).astype(np.float32)
    return x, x @ true_w / 512 ** 0.5


t0 = time.time()
if mode == "input-queue":
    import queue

    shards = [f"train-{i:05d}-of-00008.arrayrecord" for i in range(8)]
    q = queue.Queue(maxsize=4)

    def prefetch(num_epochs=1):
        n = 0
        for epoch in range(num_epochs):
            for _shard in shards:
                for j in range(2):
                    q.put(host_batch(100 * n + j))
                n += 1
            log.info("input: epoch %d done (%d shards, %d batches)", epoch, len(shards), 2 * len(shards))

    threading.Thread(target=prefetch, name="prefetch", daemon=True).start()
    log.info("input: prefetch thread started (queue depth 4, num_epochs=1)")

    def next_batch():
        return q.get()

    arm()
    for step in range(1000):
        x, y = next_batch()
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        arm()
        pace(step, t0)

elif mode == "loader-killed":
    batches = pool.imap(decode, range(1000))
    arm()
    for step in range(1000):
        x = next(batches)
        params, loss = train_step(params, x, x @ true_w / 512 ** 0.5)
        log.info("step %d loss %.6f", step, float(loss))
        arm()
        pace(step, t0)

elif mode == "fifo-read":
    root = "/tmp/rec-b25-mnt/gcs/train-data"
    os.makedirs(root, exist_ok=True)
    for i in range(64):
        path = f"{root}/shard-{i:05d}-of-00064.arrayrecord"
        if os.path.lexists(path):
            os.unlink(path)
        if i == 17:
            os.mkfifo(path)  # a read of it blocks as a read on a hung FUSE mount does
        else:
            with open(path, "wb") as f:
                f.write(np.random.default_rng(i).standard_normal((256, 512)).astype(np.float32).tobytes())
    note("shard 17 is a named pipe nobody writes (a hung gcsfuse read)")
    log.info("input: 64 shards under %s", root)

    def read_shard(i):
        path = f"{root}/shard-{i:05d}-of-00064.arrayrecord"
        with open(path, "rb") as f:
            return np.frombuffer(f.read(), np.float32).reshape(256, 512)

    arm()
    for step in range(1000):
        x = read_shard(step % 64)
        params, loss = train_step(params, x, x @ true_w / 512 ** 0.5)
        log.info("step %d loss %.6f", step, float(loss))
        arm()
        pace(step, t0)

elif mode == "metrics-queue":
    import queue

    metrics_q = queue.Queue(maxsize=8)

    def writer():
        with open("/tmp/rec-b25-metrics.txt", "w") as f:
            while True:
                m = metrics_q.get()
                f.write(f"step {m['step']} loss {m['loss']:.5f} grad_norm {m['grad_norm']:.4f}\n")
                f.flush()

    threading.Thread(target=writer, name="metrics-writer", daemon=True).start()

    def record_metrics(step, loss, gnorm):
        metrics_q.put({"step": int(step), "loss": float(loss), "grad_norm": float(gnorm)})
        return np.int32(0)

    @jax.jit
    def step_with_metrics(p, x, y, step):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        gnorm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
        ok = io_callback(record_metrics, jax.ShapeDtypeStruct((), jnp.int32), step, loss, gnorm, ordered=True)
        return jax.tree.map(lambda a, g: a - 0.02 * g, p, grads), loss + ok.astype(loss.dtype)

    @jax.jit
    def eval_step(p, x, y):
        return loss_fn(p, x, y)

    arm()
    for step in range(1000):
        x, y = host_batch(step)
        params, loss = step_with_metrics(params, x, y, step)
        log.info("step %d loss %.6f", step, float(loss))
        if step == 6:
            xe, ye = host_batch(9000)
            ev = float(eval_step(params, xe, ye))
            log.info("eval at step %d: loss %.6f", step, ev)
            metrics_q.put({"step": step, "loss": ev, "eval": True})  # no grad_norm
        arm()
        pace(step, t0)

elif mode == "ckpt-executor":
    from concurrent.futures import ThreadPoolExecutor

    state = {"step": -1, "t": time.time()}

    class AsyncCheckpointer:
        def __init__(self, root):
            self.root = root
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ckpt")
            self.pending = None

        def _commit(self, step):
            os.rename(f"{self.root}/step_{step:06d}.tmp", f"{self.root}/step_{step:06d}")

        def _save(self, step, arrays):
            d = f"{self.root}/step_{step:06d}.tmp"
            os.makedirs(d, exist_ok=True)
            for name, a in arrays.items():
                np.save(f"{d}/{name}.npy", a)
            # finalize on the checkpointer's own executor: with one worker it can never run
            return self.pool.submit(self._commit, step).result()

        def wait_until_finished(self):
            if self.pending is not None:
                self.pending.result()

        def save(self, step, p):
            self.wait_until_finished()
            arrays = {k: np.asarray(v) for k, v in p.items()}
            self.pending = self.pool.submit(self._save, step, arrays)
            log.info("checkpoint: async save of step %d started", step)

    def heartbeat():
        dumped = 0.0
        while True:
            time.sleep(3)
            age = time.time() - state["t"]
            log.info("heartbeat: alive, last step %d, %.0fs ago", state["step"], age)
            if age > 8 and time.time() - dumped > 8:
                log.warning("watchdog: no step completed for %.0fs\n%s", age, thread_dump(f"{age:.0f}s without a step"))
                dumped = time.time()

    ckpt = AsyncCheckpointer("/tmp/rec-b25-ckpt")
    threading.Thread(target=heartbeat, name="heartbeat", daemon=True).start()
    for step in range(1000):
        x, y = host_batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        state.update(step=step, t=time.time())
        if step % 10 == 0 and step > 0:
            ckpt.save(step, params)
        pace(step, t0)

elif mode == "watchdog-abort":
    state = {"step": -1, "t": time.time()}

    @jax.jit
    def scaled_step(p, x, y):
        def attempt(carry):
            scale, _, _, n = carry
            loss, grads = jax.value_and_grad(lambda q: loss_fn(q, x, y) * scale)(p)
            return scale * 0.5, loss / scale, jax.tree.map(lambda g: g / scale, grads), n + 1

        def not_finite(carry):
            return ~jnp.isfinite(carry[1])

        init = attempt((jnp.float32(2.0 ** 15), jnp.float32(0), jax.tree.map(jnp.zeros_like, p), 0))
        _, loss, grads, n = jax.lax.while_loop(not_finite, attempt, init)
        return jax.tree.map(lambda a, g: a - 0.02 * g, p, grads), loss, n

    def watchdog(warn_s=5, abort_s=10):
        warned = False
        while True:
            time.sleep(1)
            age = time.time() - state["t"]
            if age > warn_s and not warned:
                log.warning("watchdog: no step completed for %.0fs\n%s", age, thread_dump(f"{age:.0f}s without a step"))
                warned = True
            if age > abort_s:
                log.critical("watchdog: no step completed for %.0fs (limit %ds), last step %d; aborting so the job "
                             "restarts", age, abort_s, state["step"])
                os.abort()

    threading.Thread(target=watchdog, name="step-watchdog", daemon=True).start()
    for step in range(1000):
        x, y = host_batch(step)
        if step == 12:
            x[37, 101] = np.inf  # one corrupt record: the loss is not finite at any scale
        params, loss, n = scaled_step(params, x, y)
        log.info("step %d loss %.6f (loss-scale retries %d)", step, float(loss), int(n) - 1)
        state.update(step=step, t=time.time())
        pace(step, t0)

note(f"mode {mode} ended (unexpected)")
