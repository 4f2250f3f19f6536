"""Pallas kernels the TPU refuses: 'block-shape' uses a (3, 100) block the Mosaic lowering rejects; 'vmem' uses
(4096, 4096) f32 blocks (64 MiB each, three operands, double-buffered) that do not fit in VMEM."""

import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def blocked_add(x, y, block):
    bm, bn = block
    spec = pl.BlockSpec((bm, bn), lambda i, j: (i, j))
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(x.shape[0] // bm, x.shape[1] // bn), in_specs=[spec, spec], out_specs=spec)(x, y)


print(f"devices: {jax.devices()}")
shape, block = {"block-shape": ((24, 1000), (3, 100)), "vmem": ((8192, 8192), (4096, 4096))}[sys.argv[1]]
x = jnp.ones(shape, jnp.float32)
y = jnp.full(shape, 2.0, jnp.float32)
print(f"pallas add: array {shape}, block {block}")
out = jax.jit(blocked_add, static_argnums=2)(x, y, block)
print(f"sum: {float(out.sum())}")
