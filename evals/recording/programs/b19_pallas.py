"""A Pallas MoE router kernel that picks each token's top-2 experts with lax.top_k inside the kernel: the Mosaic TPU
lowering has no rule for top_k. If it does lower, it runs and prints the routing."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

print(f"devices: {jax.devices()}")
T, E, K = 1024, 128, 2


def router_kernel(logits_ref, w_ref, idx_ref):
    vals, idx = jax.lax.top_k(logits_ref[...], K)
    w_ref[...] = jax.nn.softmax(vals, axis=-1)
    idx_ref[...] = idx


@jax.jit
def route(logits):
    bt = 256
    return pl.pallas_call(
        router_kernel,
        out_shape=(jax.ShapeDtypeStruct((T, K), jnp.float32), jax.ShapeDtypeStruct((T, K), jnp.int32)),
        grid=(T // bt,),
        in_specs=[pl.BlockSpec((bt, E), lambda i: (i, 0))],
        out_specs=(pl.BlockSpec((bt, K), lambda i: (i, 0)), pl.BlockSpec((bt, K), lambda i: (i, 0))),
    )(logits)


logits = jax.random.normal(jax.random.key(0), (T, E), jnp.float32)
print(f"routing {T} tokens over {E} experts, top-{K}")
w, idx = route(logits)
print(f"expert load: {jnp.bincount(idx.reshape(-1), length=E)[:8]}")
