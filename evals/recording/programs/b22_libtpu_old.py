"""An old libtpu at TPU_LIBRARY_PATH: a real PJRT plugin file (exports GetPjrtApi) that reports PJRT C API version
0.14, far older than this JAX supports. JAX starts with JAX_PLATFORMS=tpu and asks for its devices.

The plugin is b22_pjrt_stub.c, compiled here if a C compiler exists, else the prebuilt b22_pjrt_stub.so beside this
file (built on the recording author's machine with `gcc -shared -fPIC -O2`)."""

import glob
import os
import shutil
import subprocess
import sys

from _common import note

here = os.path.dirname(os.path.abspath(__file__))
path = os.environ["TPU_LIBRARY_PATH"]
os.makedirs(os.path.dirname(path), exist_ok=True)
cc = shutil.which("gcc") or shutil.which("cc")
if cc and subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", path, os.path.join(here, "b22_pjrt_stub.c")]).returncode == 0:
    note(f"compiled b22_pjrt_stub.c with {cc} to {path}")
else:
    shutil.copy(os.path.join(here, "b22_pjrt_stub.so"), path)
    note(f"no compiler ({cc}); copied the prebuilt b22_pjrt_stub.so to {path}")
note("libtpu wheels in the machine's index: " + " ".join(sorted(os.path.basename(p) for p in glob.glob("/opt/pypi/simple/libtpu*/*"))[:12]))

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
x = jnp.arange(1024.0)
print(f"sum: {float((x * x).sum())}")
sys.exit(0)
