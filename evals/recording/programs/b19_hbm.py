"""HBM exhausted, two new shapes of it:

  attention     naive attention over 32768 tokens (4 x 16 heads, bf16): the [b, h, s, s] score tensor is 137 GB,
                XLA:TPU buffer assignment fails when the step is compiled
  adam          a 3 GiB f32 model plus Adam moments (9 GiB live) and a jitted update that does not donate its inputs:
                the new params and moments need another 9 GiB while the old ones are alive
  batch-probe   an automatic batch-size probe: tries 65536 tokens per step, gets RESOURCE_EXHAUSTED, halves until a
                step fits, then trains 12 steps healthily (the OOM is survived)
"""

import sys
import time

import jax
import jax.numpy as jnp

mode = sys.argv[1]
print(f"devices: {jax.devices()}")
stats = jax.devices()[0].memory_stats() or {}
print(f"hbm bytes_limit={stats.get('bytes_limit')} bytes_in_use={stats.get('bytes_in_use')}")

if mode == "attention":
    B, H, S, Dh = 4, 16, 32768, 128

    @jax.jit
    def attention(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / Dh ** 0.5
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    q = jnp.ones((B, H, S, Dh), jnp.bfloat16)
    print(f"attention: batch {B} heads {H} seq {S} head_dim {Dh}")
    out = attention(q, q, q)
    print(f"out {out.shape} {float(out[0, 0, 0, 0])}")

elif mode == "adam":
    n = 6  # six 8192 x 16384 f32 matrices = 3 GiB
    params = [jnp.full((8192, 16384), 0.01, jnp.float32) + i for i in range(n)]
    mu = [jnp.zeros_like(p) for p in params]
    nu = [jnp.zeros_like(p) for p in params]
    jax.block_until_ready((params, mu, nu))
    stats = jax.devices()[0].memory_stats() or {}
    print(f"params+adam state on device: bytes_in_use={stats.get('bytes_in_use')}")

    @jax.jit  # no donate_argnums: old and new state are alive together
    def adam_step(params, mu, nu, step):
        grads = [jnp.tanh(p) * 1e-3 for p in params]
        mu = [0.9 * m + 0.1 * g for m, g in zip(mu, grads)]
        nu = [0.999 * v + 0.001 * g * g for v, g in zip(nu, grads)]
        params = [p - 1e-3 * m / (jnp.sqrt(v) + 1e-8) for p, m, v in zip(params, mu, nu)]
        return params, mu, nu

    for step in range(3):
        params, mu, nu = adam_step(params, mu, nu, step)
        jax.block_until_ready(params)
        print(f"step {step} done")

elif mode == "batch-probe":
    D, F, V = 2048, 8192, 32000
    k = jax.random.key(0)
    params = {"w1": jax.random.normal(k, (D, F), jnp.bfloat16) * 0.02,
              "w2": jax.random.normal(k, (F, D), jnp.bfloat16) * 0.02,
              "head": jax.random.normal(k, (D, V), jnp.bfloat16) * 0.02}

    def loss_fn(p, x, y):
        h = jax.nn.gelu(x @ p["w1"]) @ p["w2"]
        logits = (h @ p["head"]).astype(jnp.float32)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=-1))

    @jax.jit
    def train_step(p, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree.map(lambda a, b: a - 0.01 * b.astype(a.dtype), p, g), loss

    tokens = 65536
    while True:
        try:
            print(f"batch probe: trying {tokens} tokens per step")
            x = jnp.ones((tokens, D), jnp.bfloat16)
            y = jnp.zeros((tokens,), jnp.int32)
            new_p, loss = train_step(params, x, y)
            jax.block_until_ready(loss)
            print(f"batch probe: {tokens} tokens per step fits")
            break
        except Exception as e:  # noqa: BLE001 - the probe expects RESOURCE_EXHAUSTED
            print(f"batch probe: {tokens} tokens per step does not fit: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            tokens //= 2
            if tokens < 1024:
                raise
    t0 = time.time()
    for step in range(12):
        x = jax.random.normal(jax.random.fold_in(k, step), (tokens, D), jnp.bfloat16)
        y = jax.random.randint(jax.random.fold_in(k, 100 + step), (tokens,), 0, V)
        params, loss = train_step(params, x, y)
        print(f"step {step} loss {float(loss):.4f} tokens {tokens} ({time.time() - t0:.1f}s)")
        time.sleep(max(0.0, (step + 1) * 0.6 - (time.time() - t0)))
    print("training done")
