"""Batch-23 compile-time failures on the TPU.

Modes (argv[1]):
  per-example-grad  DP-SGD style clipping: jax.vmap(jax.grad(...)) over a batch of 256 gives per-example gradients
                    of a 4096 x 8192 layer (256 x 128 MiB), clipped and summed: XLA:TPU cannot place them in HBM
  moe-kernel        a Pallas MoE dispatch kernel that sorts token scores inside the kernel (lax.sort); if this
                    Mosaic lowers it, the same kernel with a cumsum, then one that takes an argsort: the first the
                    TPU lowering refuses ends the program with its traceback
"""

import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from _common import note

mode = sys.argv[1]
print(f"devices: {jax.devices()}", flush=True)

if mode == "per-example-grad":
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    params = {"w1": jax.random.normal(k1, (4096, 8192)) * 0.01, "w2": jax.random.normal(k2, (8192, 16)) * 0.01}

    def loss_one(p, x, y):
        h = jnp.tanh(x @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    @jax.jit
    def dp_step(p, xs, ys):
        grads = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(p, xs, ys)  # one gradient per example
        norms = jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
        factor = jnp.minimum(1.0, 1.0 / (norms + 1e-6))
        clipped = jax.tree.map(lambda g: jnp.sum(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), 0), grads)
        return jax.tree.map(lambda a, g: a - 0.01 * g / xs.shape[0], p, clipped)

    xs = jax.random.normal(k3, (256, 4096))
    ys = jnp.zeros((256, 16))
    params = dp_step(params, xs, ys)
    print(f"dp step done: {float(jnp.sum(params['w2'])):.6f}", flush=True)

elif mode == "moe-kernel":
    scores = jax.random.normal(jax.random.key(1), (8, 128), jnp.float32)

    def sort_kernel(s_ref, o_ref):
        o_ref[...] = jax.lax.sort(s_ref[...], dimension=1)

    def cumsum_kernel(s_ref, o_ref):
        o_ref[...] = jnp.cumsum((s_ref[...] > 0).astype(jnp.int32), axis=1).astype(jnp.float32)

    def argsort_kernel(s_ref, o_ref):
        o_ref[...] = jnp.argsort(s_ref[...], axis=1).astype(jnp.float32)

    for name, kernel in (("sort", sort_kernel), ("cumsum", cumsum_kernel), ("argsort", argsort_kernel)):
        dispatch = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(scores.shape, jnp.float32)))
        out = dispatch(scores)
        print(f"moe dispatch ({name}) ok: {float(out.sum()):.3f}", flush=True)
        note(f"the {name} kernel compiled and ran; trying the next")
    note("every kernel compiled: nothing refused")
