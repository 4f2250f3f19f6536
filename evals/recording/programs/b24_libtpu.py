"""A libtpu built against another PJRT C API at TPU_LIBRARY_PATH (b24_pjrt_stub.c compiled here with gcc):
  newer  the plugin reports PJRT C API 1.2 (a newer major version than this JAX knows)
  null   GetPjrtApi() returns NULL
JAX starts with JAX_PLATFORMS=tpu and asks for its devices."""

import os
import shutil
import subprocess
import sys

from _common import note

form = sys.argv[1] if len(sys.argv) > 1 else "newer"
here = os.path.dirname(os.path.abspath(__file__))
path = os.environ["TPU_LIBRARY_PATH"]
os.makedirs(os.path.dirname(path), exist_ok=True)
flags = {"newer": ["-DPJRT_MAJOR=1", "-DPJRT_MINOR=2"], "null": ["-DNULL_API"]}[form]
cc = shutil.which("gcc") or shutil.which("cc") or "gcc"
rc = subprocess.run([cc, "-shared", "-fPIC", "-O2", *flags, "-o", path, os.path.join(here, "b24_pjrt_stub.c")]).returncode
note(f"compiled b24_pjrt_stub.c {' '.join(flags)} with {cc} to {path}: rc {rc}")

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
x = jnp.arange(1024.0)
print(f"sum: {float((x * x).sum())}")
