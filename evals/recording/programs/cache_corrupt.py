"""Corrupt persistent-cache entries read by a restart: a first run fills the cache at $JAX_COMPILATION_CACHE_DIR,
then every entry is damaged ('truncate': cut to 16 bytes; 'garble': 4 KiB in the middle overwritten, size kept), and
a second run of the same program (the restarted container) reads them. Both runs' output is recorded."""

import os
import shutil
import subprocess
import sys

from _common import child_kwargs, exit_code, note

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache_use.py")
path = os.environ["JAX_COMPILATION_CACHE_DIR"]
shutil.rmtree(path, ignore_errors=True)
os.makedirs(path)

note("first run: fills the cache")
first = subprocess.run([sys.executable, RUN, "as-is"], timeout=30, **child_kwargs())
note(f"first run exited with {exit_code(first.returncode)}")

# the executables ('<key>-cache'); the '<key>-atime' files beside them are left alone
entries = sorted(os.path.join(d, f) for d, _, files in os.walk(path) for f in files if f.endswith("-cache"))
for entry in entries:
    size = os.path.getsize(entry)
    if sys.argv[1] == "truncate":
        os.truncate(entry, min(16, size // 2))
    else:
        with open(entry, "r+b") as f:
            f.seek(size // 2)
            f.write(os.urandom(min(4096, max(1, size // 4))))
note(f"{sys.argv[1]}: {len(entries)} cache entries damaged: "
     + ", ".join(f"{os.path.relpath(e, path)}={os.path.getsize(e)}B" for e in entries))

note("second run: the restart reads the damaged cache")
second = subprocess.run([sys.executable, RUN, "as-is"], timeout=30, **child_kwargs())
note(f"second run exited with {exit_code(second.returncode)}")
sys.exit(exit_code(second.returncode))
