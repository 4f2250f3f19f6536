"""The chip held by the trainer itself when its input pipeline starts worker processes: the trainer opens the TPU,
then starts two input workers with multiprocessing's 'spawn' start method; the augmentation module they import
builds its lookup table with jax.numpy, so each worker initialises JAX's TPU backend and finds the chip taken.
The trainer notices its workers died and stops."""

import multiprocessing as mp
import sys
import time  # noqa: F401 - kept so the recorded line numbers still match this file


def augment_worker(worker_id, q):
    import jax.numpy as jnp  # the augmentation module's lookup table: JAX initialises its backend here

    table = jnp.linspace(0.0, 1.0, 256)
    q.put((worker_id, float(table.sum())))


if __name__ == "__main__":
    from _common import note, small_regression, trainer_logger

    import jax

    log = trainer_logger()
    log.info("JAX %s, devices %s", jax.__version__, jax.devices())
    params, train_step, batch, _ = small_regression(seed=5)
    x, y = batch(0)
    params, loss = train_step(params, x, y)
    log.info("warm-up step loss %.6f", float(loss))
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    workers = [ctx.Process(target=augment_worker, args=(i, q), name=f"input-worker-{i}") for i in range(2)]
    for w in workers:
        w.start()
    log.info("started %d input workers: %s", len(workers), [w.pid for w in workers])
    for w in workers:
        w.join(timeout=40)
    codes = [w.exitcode for w in workers]
    note(f"input worker exit codes: {codes}")
    if any(c != 0 for c in codes):
        log.error("input pipeline failed: workers exited with %s", codes)
        raise RuntimeError(f"input worker {workers[0].name} (pid {workers[0].pid}) exited with code {codes[0]}")
    log.info("input workers ready: %s", [q.get(timeout=5) for _ in workers])
    sys.exit(0)
