"""A colocated-Python-style process (JAX on the host CPU, JAX_PLATFORMS=cpu, PYTHONFAULTHANDLER=1) that decodes
records with a native helper; the helper writes through a NULL pointer: SIGSEGV, Python's fault handler prints the
threads' stacks and the process dies (exit 139). No TPU is touched."""

import ctypes
import threading
import time

import jax
import jax.numpy as jnp

from _common import note

print(f"colocated python: JAX {jax.__version__} on {jax.devices()}", flush=True)


def decode_batch(i: int):
    # the 'native decoder': a memmove into a buffer pointer that came back NULL for record 5
    buf = ctypes.create_string_buffer(4096)
    dst = ctypes.addressof(buf) if i != 5 else 0
    ctypes.memmove(dst, b"\x01" * 4096, 4096)
    return jnp.frombuffer(buf.raw, dtype=jnp.uint8).astype(jnp.float32).reshape(64, 64)


def prefetch():
    while True:
        time.sleep(0.5)


threading.Thread(target=prefetch, name="prefetch", daemon=True).start()
for i in range(8):
    x = decode_batch(i)
    print(f"colocated python: decoded record batch {i}: sum {float(x.sum()):.1f}", flush=True)
    time.sleep(0.3)
note("no crash")
