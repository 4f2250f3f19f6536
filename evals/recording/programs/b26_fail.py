"""Batch-26 failures with an earlier, alarming-looking line that is not the cause: the run goes on past it
and a different error ends it.

Real jitted steps of the small MLP of _common.py (Python logging on stderr).

Modes (argv[1]):
  cache-then-oom    $JAX_COMPILATION_CACHE_DIR is made read-only first: every compile warns "Error writing persistent
                    compilation cache entry ... PermissionError" and the run goes on uncached; 20 steps train; at
                    step 20 the curriculum switches to long context (sequence 2048 -> 16384) and an auxiliary
                    vocabulary head over the longer batch (65536 x 128000 f32 logits) does not fit in HBM: the step
                    fails at compile time with RESOURCE_EXHAUSTED (exit 1)
  upload-then-user  at step 3 the optional TensorBoard event upload into a read-only directory (standing in for a
                    mounted bucket) fails: logged as ERROR with its PermissionError traceback, "optional, continuing";
                    training goes on; at step 12 the first eval loads the new eval set, whose features are 768 wide,
                    into the 512-wide model: dot_general shape TypeError, exit 1
  warn-then-compile a float64 request (UserWarning: Explicitly requested dtype float64 ... truncated) and donated
                    buffers that cannot be used (UserWarning: Some donated buffers were not usable) at the first step,
                    and a slow first step; training goes on; at step 14 the eval runs the model's Pallas layer on the
                    eval sequence length 1000: its block width (length // 4 = 250) is not divisible by 128, and the
                    Pallas TPU lowering refuses it (ValueError, exit 1)
"""

import os
import shutil
import sys
import time
import traceback

from _common import note, trainer_logger

mode = sys.argv[1] if len(sys.argv) > 1 else "cache-then-oom"
log = trainer_logger()

if mode == "cache-then-oom":
    path = os.environ["JAX_COMPILATION_CACHE_DIR"]
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    os.chmod(path, 0o555)
    note(f"{path} made read-only (mode 555, uid {os.getuid()})")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import small_regression  # noqa: E402

log.info("JAX %s, devices %s", jax.__version__, jax.devices())
params, train_step, batch, loss_fn = small_regression(seed=260)


def pace(step, t0, period=0.3):
    time.sleep(max(0.0, (step + 1) * period - (time.time() - t0)))


t0 = time.time()
if mode == "cache-then-oom":
    log.info("compilation cache: %s", jax.config.jax_compilation_cache_dir)
    vocab = 128000
    emb = jax.random.normal(jax.random.key(1), (vocab, 512), jnp.bfloat16) * 0.02

    @jax.jit
    def long_ctx_step(p, e, x, y):
        def loss(p):
            base = loss_fn(p, x, y)
            logits = jnp.dot(x.astype(jnp.bfloat16), e.T, preferred_element_type=jnp.float32)  # aux LM head
            aux = jax.nn.logsumexp(logits, axis=-1).mean() - logits[:, 0].mean()
            return base + 0.01 * aux
        lval, grads = jax.value_and_grad(loss)(p)
        return jax.tree.map(lambda a, g: a - 0.02 * g, p, grads), lval

    seq = 2048
    log.info("curriculum: phase 1, sequence length %d, batch 256", seq)
    for step in range(1000):
        if step == 20:
            if jax.default_backend() == "cpu":  # the host has no HBM limit: stop before phase 2 (CPU recording)
                note("CPU backend: stopping before phase 2 (its RESOURCE_EXHAUSTED needs the TPU's HBM)")
                sys.exit(3)
            seq = 16384
            log.info("curriculum: phase 2 at step %d, sequence length %d, aux vocab head on (%d rows)", step, seq,
                     65536)
            x, y = batch(step, rows=65536)
            params, loss = long_ctx_step(params, emb, x, y)
        else:
            x, y = batch(step)
            params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        pace(step, t0)

elif mode == "upload-then-user":
    tb = "/tmp/rec-b26-tb"
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

    def load_eval_set(n=4, width=768):  # the new eval set: 768-wide features
        rng = np.random.default_rng(12)
        return [(rng.standard_normal((256, width)).astype(np.float32),
                 rng.standard_normal((256, 1)).astype(np.float32)) for _ in range(n)]

    for step in range(1000):
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
            ev = [float(eval_step(params, xe, ye)) for xe, ye in load_eval_set()]
            log.info("eval at step %d: loss %.6f", step, sum(ev) / len(ev))
        pace(step, t0)

elif mode == "warn-then-compile":
    from functools import partial

    from jax.experimental import pallas as pl

    def scale_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 0.5 + 1.0

    def pallas_norm(x):  # the model's fused layer: blocks of (8, length // 4)
        bm, bn = 8, x.shape[1] // 4
        spec = pl.BlockSpec((bm, bn), lambda i, j: (i, j))
        return pl.pallas_call(scale_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(x.shape[0] // bm, x.shape[1] // bn), in_specs=[spec], out_specs=spec,
                              interpret=jax.default_backend() == "cpu")(x)

    @partial(jax.jit, donate_argnums=(0,))
    def step_fn(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        h = pallas_norm(x.reshape(64, 2048))
        new = jax.tree.map(lambda a, g: a - 0.02 * g, p, grads)
        return {k: v.astype(jnp.float32) for k, v in new.items()}, loss + 0.0 * h.mean()

    @jax.jit
    def eval_step(p, x, y, tokens):
        return loss_fn(p, x, y) + 0.0 * pallas_norm(tokens).mean()

    lr_schedule = jnp.asarray(np.linspace(0.02, 0.002, 1000), dtype=jnp.float64)  # float64 not enabled
    params = {k: v.astype(jnp.bfloat16) if k.startswith("b") else v for k, v in params.items()}
    for step in range(1000):
        x, y = batch(step)
        t_s = time.time()
        params, loss = step_fn(params, x, y)
        log.info("step %d loss %.6f (%.2fs)", step, float(loss), time.time() - t_s)
        if step == 14:
            log.info("eval at step %d: eval sequence length 1000", step)
            tokens = jnp.ones((16, 1000), jnp.float32)
            ev = float(eval_step(params, x, y, tokens))
            log.info("eval at step %d: loss %.6f", step, ev)
        pace(step, t0)

note(f"mode {mode} ended (unexpected)")
