"""Probe: prints the versions, the chip and the host as 'key: value' lines (split.py reads them into provenance)."""

import importlib.metadata
import platform
import sys
import time


def dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


print(f"date_utc: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
print(f"uname: {' '.join(platform.uname())}")
print(f"python: {sys.version.split()[0]}")
for dist in ("jax", "jaxlib", "libtpu", "libtpu-nightly", "numpy", "etils", "orbax-checkpoint", "tensorstore"):
    print(f"dist_{dist}: {dist_version(dist)}")
try:
    import libtpu

    print(f"libtpu_module: {getattr(libtpu, '__file__', '?')} version={getattr(libtpu, '__version__', '?')}")
except ImportError as e:
    print(f"libtpu_module: not importable ({e})")

import jax
import jax.extend.backend
import jaxlib

print(f"jax_version: {jax.__version__}")
print(f"jaxlib_version: {jaxlib.__version__}")
devices = jax.devices()
print(f"devices: {devices}")
print(f"device_count: {len(devices)}")
print(f"platform: {devices[0].platform}")
print(f"device_kind: {devices[0].device_kind}")
backend = jax.extend.backend.get_backend()
print("platform_version: " + " | ".join(str(backend.platform_version).splitlines()))
try:
    stats = devices[0].memory_stats() or {}
    print(f"hbm_bytes_limit: {stats.get('bytes_limit', '?')}")
except Exception as e:  # memory_stats is optional per backend; the probe must still finish
    print(f"hbm_bytes_limit: unavailable ({type(e).__name__})")
print("----- jax.print_environment_info() -----")
jax.print_environment_info()
