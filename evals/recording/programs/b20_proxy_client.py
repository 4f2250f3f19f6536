"""A Pathways client on the head: the proxy backend registered as pathwaysutils' proxy_backend.py does,
JAX_PLATFORMS=proxy, a 6 s connection timeout; the proxy cannot be reached here (no network)."""

import os

import jax
import jax.numpy as jnp
from jax.extend import backend
from jax.extend.backend import ifrt_proxy


def make_client():
    # the same factory as pathwaysutils/proxy_backend.py (AI-Hypercomputer/pathways-utils)
    options = ifrt_proxy.ClientConnectionOptions()
    timeout_secs = os.environ.get("PATHWAYS_PROXY_CONNECTION_TIMEOUT_SECS")
    if timeout_secs:
        options.connection_timeout_in_seconds = int(timeout_secs)
    return ifrt_proxy.get_client(jax.config.read("jax_backend_target"), options)


backend.register_backend_factory("proxy", make_client, priority=-1)
print(f"JAX {jax.__version__}, backend target {jax.config.read('jax_backend_target')}")
print(f"devices: {jax.devices()}")
print(f"sum: {float(jnp.ones(8).sum())}")
