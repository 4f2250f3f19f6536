"""TPU_LIBRARY_PATH names an old libtpu.so: a shared library with GetPjrtApi whose PJRT C API version is 0.20, far
older than the framework's (the stand-in is built from b21_libtpu_stub.c, or taken prebuilt beside this file when the
machine has no C compiler). JAX starts with JAX_PLATFORMS=tpu and asks for its devices."""

import os
import shutil
import subprocess

from _common import note

here = os.path.dirname(os.path.abspath(__file__))
path = os.environ["TPU_LIBRARY_PATH"]
os.makedirs(os.path.dirname(path), exist_ok=True)
cc = shutil.which("cc") or shutil.which("gcc")
built = False
if cc:
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", path, os.path.join(here, "b21_libtpu_stub.c")],
                       capture_output=True, text=True)
    built = r.returncode == 0
    note(f"{cc} exit {r.returncode} {r.stderr.strip()[:200]}")
if not built:
    shutil.copy(os.path.join(here, "b21_libtpu_stub.so"), path)
    note("copied the prebuilt b21_libtpu_stub.so")
note(f"{path}: {os.path.getsize(path)} bytes")

import jax
import jax.numpy as jnp

print(f"jax {jax.__version__}; TPU_LIBRARY_PATH={path}")
print(f"devices: {jax.devices()}")
x = jnp.arange(1024.0)
print(f"sum: {float((x * x).sum())}")
