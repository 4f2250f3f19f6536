"""Batch-23 training loops on the TPU (Python logging on stderr, as absl/logging trainers print their step lines).

Modes (argv[1]):
  healthy-guard  36 steps with jax_explain_cache_misses on, the transfer guard set to 'log' for steps 10-12 (every
                 implicit host<->device transfer logged) and an eval of another batch size at steps 18 and 30:
                 loud, no failure
  user-json      a loader that casts features to float16 (numpy's overflow RuntimeWarning, survived), 30 good steps,
                 then the first eval writes its metrics with json.dumps: a numpy float32 is not JSON serializable
  user-grad      a refactored loss that returns one value per example (the mean was dropped): jax.grad refuses a
                 non-scalar output when the first step is traced
  hbm-teacher    10 good steps with an 8 GiB frozen teacher already on the device, then the teacher's 8 GiB output
                 embedding is loaded from host memory with jax.device_put: the allocation fails at run time
  stall-lock     12 good steps, then the step's host callback (a learning-rate controller) waits for a lock the
                 main thread holds while it blocks on the step: no error, no further output (killed by the timeout)
"""

import json
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from _common import note, small_regression, trainer_logger

mode = sys.argv[1]
log = trainer_logger()
if mode == "healthy-guard":
    jax.config.update("jax_explain_cache_misses", True)
log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression()


@jax.jit
def eval_step(p, x, y):
    return loss_fn(p, x, y)


if mode == "healthy-guard":
    for step in range(36):
        x, y = batch(step)
        if step == 10:
            jax.config.update("jax_transfer_guard", "log")
            log.info("transfer guard: log (steps 10-12)")
        x_host = np.asarray(x)  # a host batch fed straight to the step: an implicit host-to-device transfer
        params, loss = train_step(params, x_host, y)
        log.info("step %d loss %.6f", step, float(loss))
        if step == 12:
            jax.config.update("jax_transfer_guard", "allow")
        if step in (18, 30):
            ex, ey = batch(10_000 + step, rows=200)
            log.info("eval step %d loss %.6f", step, float(eval_step(params, ex, ey)))
        time.sleep(0.4)
    log.info("done")

elif mode == "user-json":
    def load(step):
        x, y = batch(step)
        # the feature store ships float16; a few raw values are out of its range (numpy warns, the run goes on)
        raw = np.asarray(x) * 1.0e5 if step == 3 else np.asarray(x)
        return jnp.asarray(raw.astype(np.float16).astype(np.float32)).clip(-8, 8), y

    def write_metrics(fh, step, metrics):
        fh.write(json.dumps({"step": step, **metrics}) + "\n")

    with open("/tmp/rec-b23-metrics.jsonl", "w") as fh:
        for step in range(31):
            x, y = load(step)
            params, loss = train_step(params, x, y)
            log.info("step %d loss %.6f", step, float(loss))
            if step and step % 30 == 0:
                ex, ey = batch(20_000 + step)
                metrics = {"eval_loss": jax.device_get(eval_step(params, ex, ey)), "train_loss": float(loss)}
                log.info("eval at step %d: %s", step, metrics)
                write_metrics(fh, step, metrics)
            time.sleep(0.25)

elif mode == "user-grad":
    def per_example_loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        return jnp.sum((h @ p["w2"] + p["b2"] - y) ** 2, axis=-1)  # refactor: the batch mean moved to the caller

    @jax.jit
    def step_fn(p, x, y):
        loss, grads = jax.value_and_grad(per_example_loss)(p, x, y)
        return jax.tree.map(lambda a, g: a - 0.02 * g, p, grads), jnp.mean(loss)

    x, y = batch(0)
    params, loss = step_fn(params, x, y)
    log.info("step 0 loss %.6f", float(loss))

elif mode == "hbm-teacher":
    n = 2 ** 31  # 8 GiB of float32
    teacher_body = jnp.full((n // 4096, 4096), 0.01, jnp.float32)
    log.info("teacher body on device: %.2f GiB", teacher_body.nbytes / 2 ** 30)
    for step in range(10):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        time.sleep(0.3)
    stats = jax.devices()[0].memory_stats() or {}
    log.info("HBM in use %.2f GiB of %.2f GiB", stats.get("bytes_in_use", 0) / 2 ** 30,
             stats.get("bytes_limit", 0) / 2 ** 30)
    log.info("loading teacher output embedding from host (distillation starts at step 10)")
    table = np.zeros((n // 4096, 4096), np.float32)
    teacher_head = jax.device_put(table)
    teacher_head.block_until_ready()
    log.info("teacher head on device")

elif mode == "stall-lock":
    lock = threading.Lock()
    lr_state = {"lr": 0.02}

    def lr_controller(loss):
        with lock:  # the summary writer's lock: the main loop holds it while it waits on the step
            lr_state["lr"] *= 0.999
            return np.float32(lr_state["lr"])

    @jax.jit
    def step_cb(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        lr = io_callback(lr_controller, jax.ShapeDtypeStruct((), jnp.float32), loss)
        return jax.tree.map(lambda a, g: a - lr * g, p, grads), loss + 0.0 * lr

    for step in range(1000):
        x, y = batch(step)
        if step < 12:
            params, loss = step_cb(params, x, y)
            log.info("step %d loss %.6f", step, float(loss))
        else:
            if step == 12:
                note("from step 12 the loop holds the summary lock while it waits on the step")
            with lock:
                params, loss = step_cb(params, x, y)
                log.info("step %d loss %.6f", step, float(loss))
        time.sleep(0.3)
