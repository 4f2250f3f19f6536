"""A healthy, loud training run (b21): 36 steps of a small MLP, one step a second. Survived noise on the way: the
float64 truncation UserWarning of the config, a donated eval batch that cannot be reused (UserWarning), a profiler
trace of steps 10-12 written to $PROFILE_DIR (the profiler's own start/stop lines), and HBM statistics every 6 steps."""

import os
import time

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
print(f"backend: {jax.default_backend()} {jax.devices()[0].device_kind}")
lr = jnp.asarray(0.05, dtype=jnp.float64)
trace_dir = os.environ.get("PROFILE_DIR", "/tmp/rec-b21-profile")


@jax.jit
def train_step(w, x):
    loss, g = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - lr * g, loss


eval_step = jax.jit(lambda w, x: jnp.mean(jnp.tanh(x @ w)), donate_argnums=(1,))

w = jnp.ones((2048, 2048)) * 0.01
for i in range(36):
    if i == 10:
        jax.profiler.start_trace(trace_dir)
        print(f"profiling steps 10-12 into {trace_dir}")
    w, loss = train_step(w, jnp.full((512, 2048), (i % 9 + 1) / 9.0))
    print(f"step {i} loss {float(loss):.6f}")
    if i == 12:
        jax.profiler.stop_trace()
        print("profile written")
    if i % 12 == 11:
        print(f"eval step {i}: {float(eval_step(w, jnp.ones((256, 2048)))):.6f}")
    if i % 6 == 5:
        s = jax.devices()[0].memory_stats() or {}
        print(f"hbm bytes_in_use={s.get('bytes_in_use')} peak={s.get('peak_bytes_in_use')} limit={s.get('bytes_limit')}")
    time.sleep(0.8)
print("training done")
