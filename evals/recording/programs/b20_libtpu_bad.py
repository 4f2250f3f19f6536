"""A custom libtpu named by TPU_LIBRARY_PATH that is not usable:
  truncated  the first 8 MiB of the real libtpu.so (a download cut off)
  wronglib   a real shared library that is not libtpu (libm), saved under the name libtpu.so
Then JAX starts with JAX_PLATFORMS=tpu and asks for its devices.
"""

import ctypes.util
import importlib.util
import os
import shutil
import sys

from _common import note

mode = sys.argv[1]
path = os.environ["TPU_LIBRARY_PATH"]
os.makedirs(os.path.dirname(path), exist_ok=True)
if mode == "truncated":
    spec = importlib.util.find_spec("libtpu")
    real = os.path.join(os.path.dirname(spec.origin), "libtpu.so")
    with open(real, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read(8 << 20))
    note(f"copied the first 8 MiB of {real} ({os.path.getsize(real)} bytes) to {path}")
else:
    lib = "/lib/x86_64-linux-gnu/libm.so.6"
    if not os.path.exists(lib):
        lib = ctypes.util.find_library("m") or lib
    shutil.copy(lib if os.path.isabs(lib) else "/usr/lib/x86_64-linux-gnu/" + lib, path)
    note(f"copied {lib} to {path}")

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
x = jnp.arange(1024.0)
print(f"sum: {float((x * x).sum())}")
