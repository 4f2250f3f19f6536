"""A colocated-Python-style exchange on one host: the 'client' pickles a preprocessing function by reference
(cloudpickle where installed, as colocated Python does, else pickle) from a module that exists only in the client's
image; the 'sidecar' process (JAX on CPU, a different image without that module) receives the payload and loads it:
ModuleNotFoundError while deserialising, the sidecar exits 1."""

import os
import subprocess
import sys
import tempfile

from _common import child_kwargs, exit_code, note

SIDECAR = r"""
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s] %(message)s")
log = logging.getLogger("colocated_python")
import jax
try:
    import cloudpickle as pk
except ImportError:
    import pickle as pk


def load_function(payload):
    return pk.loads(payload)


def serve(stream):
    log.info("jax %s on %s; python %s", jax.__version__, jax.devices(), sys.version.split()[0])
    payload = stream.read()
    log.info("received function payload (%d bytes)", len(payload))
    try:
        fn = load_function(payload)
    except Exception:
        log.exception("could not deserialize the colocated function; returning the error to the caller")
        return 1
    log.info("loaded %s", fn)
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.stdin.buffer))
"""

pkg = tempfile.mkdtemp(prefix="rec-b24-client-")
os.makedirs(os.path.join(pkg, "featurize"))
with open(os.path.join(pkg, "featurize", "__init__.py"), "w") as f:
    f.write("")
with open(os.path.join(pkg, "featurize", "text.py"), "w") as f:
    f.write("def tokenize_batch(batch):\n    return [len(s) for s in batch]\n")
sys.path.insert(0, pkg)
from featurize.text import tokenize_batch  # noqa: E402

try:
    import cloudpickle as pk
    note("client uses cloudpickle")
except ImportError:
    import pickle as pk
    note("cloudpickle not installed: client uses pickle")
payload = pk.dumps(tokenize_batch)
kw = child_kwargs()
env = {**kw.pop("env"), "JAX_PLATFORMS": "cpu"}
srv_dir = "/tmp/rec-b24-sidecar"
os.makedirs(srv_dir, exist_ok=True)
with open(os.path.join(srv_dir, "server.py"), "w") as f:
    f.write(SIDECAR)
r = subprocess.run([sys.executable, os.path.join(srv_dir, "server.py")], input=payload, env=env, cwd="/", **kw)
note(f"sidecar exited with {exit_code(r.returncode)}")
sys.exit(exit_code(r.returncode))
