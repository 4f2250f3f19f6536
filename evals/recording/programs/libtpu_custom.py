"""A custom libtpu named by TPU_LIBRARY_PATH: 'invalid' writes a non-library file there first; 'missing' does not."""

import os
import sys

mode = sys.argv[1]
path = os.environ["TPU_LIBRARY_PATH"]
if mode == "invalid":
    # what a failed download leaves behind: an HTML error page saved under the library's name
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("<html><head><title>404 Not Found</title></head><body>No such object: libtpu.so</body></html>\n")

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
x = jnp.arange(1024.0)
print(f"sum: {float((x * x).sum())} on {x.devices()}")
