"""Batch-26 stalls: training stops making progress with no error; only the program's own output says why.

Every mode trains the small MLP of _common.py with real jitted steps (Python logging on stderr, as absl/logging
trainers print their step lines) under faulthandler.dump_traceback_later(5 s, repeat=True), re-armed after every
step, then stops making progress for a different reason. No mode raises; each is killed by the harness's timeout.

Modes (argv[1]):
  lock-order   at step 10 the trainer starts an async checkpoint-upload thread that holds the checkpoint lock while it
               writes, then takes the stats lock to record the bytes it uploaded; the step loop's metrics logger holds
               the stats lock and takes the checkpoint lock to print the last saved step: the two threads wait on each
               other (lock-order inversion); faulthandler dumps both threads in their `with` statements
  event-wait   an exporter thread publishes the weights for the eval fleet every `every` steps (its default 10: the
               trainer's --export_every=15 is never passed to it) and sets an Event for each export; at step 15 the
               trainer waits on the Event of step 15 with no timeout; faulthandler dumps the main thread in
               threading.py wait called from wait_exported, the exporter idle in queue.get
  tokenizer    every 8 steps the loader pipes the next text shard through a tokenizer subprocess: it writes the text to
               the child's stdin, closes it, and calls proc.wait() before reading stdout (the pattern the subprocess
               docs warn about). Shard 0's token ids (~40 KB) fit in the 64 KiB pipe buffer; shard 1's (~200 KB) do
               not, so at step 8 the child blocks writing stdout and the parent waits for it to exit; faulthandler
               dumps the main thread in subprocess.py wait called from tokenize_shard
"""

import faulthandler
import os
import subprocess
import sys
import threading
import time

from _common import note, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "lock-order"
log = trainer_logger()
DUMP_S = 5

import jax  # noqa: E402
import numpy as np  # noqa: E402

from _common import small_regression  # noqa: E402

log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression(seed=26)


def arm():
    """The per-step watchdog: stacks to stderr if no step completes within DUMP_S (re-armed after every step)."""
    faulthandler.dump_traceback_later(DUMP_S, repeat=True)


def pace(step, t0, period=0.3):
    time.sleep(max(0.0, (step + 1) * period - (time.time() - t0)))


t0 = time.time()
if mode == "lock-order":
    class CheckpointUploader:
        def __init__(self, root):
            self.root = root
            self.ckpt_lock = threading.Lock()   # guards the checkpoint manifest
            self.stats_lock = threading.Lock()  # guards the running train stats
            self.last_saved = -1
            self.bytes_uploaded = 0
            self.stats = {"loss_sum": 0.0, "n": 0}

        def upload_async(self, step, p):
            arrays = {k: np.asarray(v) for k, v in p.items()}
            threading.Thread(target=self._upload, args=(step, arrays), name=f"ckpt-upload-{step}", daemon=True).start()
            log.info("checkpoint: async upload of step %d started", step)

        def _upload(self, step, arrays):
            with self.ckpt_lock:
                d = f"{self.root}/step_{step:06d}"
                os.makedirs(d, exist_ok=True)
                size = 0
                for name, a in arrays.items():
                    np.save(f"{d}/{name}.npy", a)
                    size += a.nbytes
                    time.sleep(0.25)  # a slow bucket
                self.last_saved = step
                with self.stats_lock:
                    self.bytes_uploaded += size
            log.info("checkpoint: step %d uploaded (%d bytes)", step, size)

        def log_metrics(self, step, loss):
            with self.stats_lock:
                self.stats["loss_sum"] += loss
                self.stats["n"] += 1
                avg = self.stats["loss_sum"] / self.stats["n"]
                time.sleep(0.05)
                with self.ckpt_lock:
                    last = self.last_saved
            log.info("step %d loss %.6f avg %.6f last_ckpt %d", step, loss, avg, last)

    up = CheckpointUploader("/tmp/rec-b26-ckpt")
    arm()
    for step in range(1000):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        up.log_metrics(step, float(loss))
        if step % 10 == 0 and step > 0:
            up.upload_async(step, params)
        arm()
        pace(step, t0)

elif mode == "event-wait":
    import queue

    class WeightExporter:
        """Publishes the weights for the eval fleet every `every` steps; wait_exported(step) blocks until done."""

        def __init__(self, root, every=10):
            self.root, self.every = root, every
            self.q = queue.Queue()
            self.done = {}
            threading.Thread(target=self._run, name="weight-exporter", daemon=True).start()
            log.info("exporter: publishing to %s every %d steps", root, every)

        def event(self, step):
            return self.done.setdefault(step, threading.Event())

        def offer(self, step, p):
            self.q.put((step, p))

        def _run(self):
            while True:
                step, p = self.q.get()
                if step == 0 or step % self.every:
                    continue
                d = f"{self.root}/step_{step:06d}"
                os.makedirs(d, exist_ok=True)
                for k, v in p.items():
                    np.save(f"{d}/{k}.npy", np.asarray(v))
                log.info("exporter: exported step %d to %s", step, d)
                self.event(step).set()

        def wait_exported(self, step):
            self.event(step).wait()

    export_every = 15  # --export_every=15
    exporter = WeightExporter("/tmp/rec-b26-export")  # the flag is not passed on: the exporter keeps every=10
    arm()
    for step in range(1000):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        exporter.offer(step, params)
        if step % export_every == 0 and step > 0:
            log.info("export: waiting for the exporter to publish step %d before continuing", step)
            exporter.wait_exported(step)
            log.info("export: step %d published", step)
        arm()
        pace(step, t0)

elif mode == "tokenizer":
    TOKENIZER = (
        "import sys\n"
        "text = sys.stdin.read()\n"  # reads until EOF
        "ids = [hash(w) % 32000 for w in text.split()]\n"
        "sys.stdout.write(' '.join(map(str, ids)))\n"
    )
    root = "/tmp/rec-b26-text"
    os.makedirs(root, exist_ok=True)
    for i in range(4):
        with open(f"{root}/shard-{i:05d}-of-00004.txt", "w") as f:
            f.write(" ".join(f"w{(i * 7919 + j) % 5000}" for j in range(8000 if i == 0 else 40000)))

    def tokenize_shard(i):
        path = f"{root}/shard-{i:05d}-of-00004.txt"
        proc = subprocess.Popen([sys.executable, "-c", TOKENIZER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        log.info("input: tokenizing %s (tokenizer pid %d)", os.path.basename(path), proc.pid)
        with open(path, "rb") as f:
            proc.stdin.write(f.read())
        proc.stdin.close()
        proc.wait()  # before reading stdout: a child with more than a pipe buffer of output never exits
        return np.array(proc.stdout.read().split(), np.int64)

    shard = 0
    tokens = tokenize_shard(shard)
    log.info("input: shard %d tokenized: %d tokens", shard, len(tokens))
    arm()
    for step in range(1000):
        if step > 0 and step % 8 == 0:
            shard += 1
            tokens = tokenize_shard(shard)
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        arm()
        pace(step, t0)

note(f"mode {mode} ended (unexpected)")
