"""Compile-time refusals other than memory, in a small attention/FFN step (b21):

  fp8      a Pallas matmul kernel whose operands are float8_e4m3fn (an fp8 experiment ported from a newer chip):
           Mosaic has to lower an fp8 x fp8 matmul on a v5e
  reshape  a Pallas kernel that flattens its (8, 256) f32 block into one row before a reduction (an in-kernel reshape
           of the tiled layout)
  ffi      a custom call (jax.ffi.ffi_call) to a kernel registered only for GPU builds, compiled for the TPU
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl

mode = sys.argv[1]
print(f"devices: {jax.devices()}")
print(f"building train step (kernel variant: {mode})")


def fp8_matmul(x, w):
    def kernel(x_ref, w_ref, o_ref):
        o_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), jnp.float32),
        grid=(x.shape[0] // 128, w.shape[1] // 128),
        in_specs=[pl.BlockSpec((128, x.shape[1]), lambda i, j: (i, 0)),
                  pl.BlockSpec((w.shape[0], 128), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)),
    )(x, w)


def row_flatten_sum(x):
    def kernel(x_ref, o_ref):
        flat = x_ref[...].reshape(1, -1)            # (8, 256) -> (1, 2048)
        o_ref[...] = jnp.broadcast_to(jnp.sum(flat, axis=1, keepdims=True), o_ref.shape)

    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((x.shape[0] // 8 * 8, 128), jnp.float32),
        grid=(x.shape[0] // 8,),
        in_specs=[pl.BlockSpec((8, 256), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
    )(x)


def fused_rmsnorm(x):
    return jax.ffi.ffi_call("fused_rmsnorm_fwd", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-6))


@jax.jit
def train_step(w, x):
    if mode == "fp8":
        h = fp8_matmul(x.astype(jnp.float8_e4m3fn), w.astype(jnp.float8_e4m3fn))
    elif mode == "reshape":
        h = x @ w
        h = h + row_flatten_sum(h)[:, :1]
    else:
        h = fused_rmsnorm(x @ w)
    return jnp.mean(h * h)


w = jnp.ones((512, 256), jnp.float32) * 0.01
x = jnp.ones((256, 512), jnp.float32)
print(f"step 0 loss {float(train_step(w, x)):.6f}")
