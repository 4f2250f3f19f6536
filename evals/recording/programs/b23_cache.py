"""Persistent compilation cache whose entries cannot be read (b23): a first run fills the cache at
$JAX_COMPILATION_CACHE_DIR; then its entry files lose their read permission (as when an earlier job running as root
with umask 077 wrote them on a shared volume). A second run (the restarted container) reads the cache.

  warn   fill (when the cache is empty), make the entries unreadable, restart with the default settings: JAX warns
         on every unreadable entry, compiles again and trains 24 steps (healthy)
  raise  as warn, but the restart sets JAX_RAISE_PERSISTENT_CACHE_ERRORS=true: the first unreadable entry ends it
  child  one run: 24 training steps with an eval every 8 steps
"""

import os
import stat
import subprocess
import sys
import time

from _common import child_kwargs, exit_code, note

path = os.environ["JAX_COMPILATION_CACHE_DIR"]

if sys.argv[1] == "child":
    from _common import small_regression, trainer_logger
    import jax

    log = trainer_logger()
    log.info("JAX %s, devices %s, compilation cache %s", jax.__version__, jax.devices(),
             jax.config.jax_compilation_cache_dir)
    params, train_step, batch, loss_fn = small_regression()
    eval_step = jax.jit(loss_fn)
    for step in range(24):
        x, y = batch(step)
        params, loss = train_step(params, x, y)
        log.info("step %d loss %.6f", step, float(loss))
        if step % 8 == 7:
            ex, ey = batch(5000 + step, rows=512)
            log.info("eval step %d loss %.6f", step, float(eval_step(params, ex, ey)))
        time.sleep(0.1)
    sys.exit(0)

me = os.path.abspath(__file__)
os.makedirs(path, exist_ok=True)
entries = [f for f in os.listdir(path) if f.endswith("-cache")]
if not entries:
    note("first run: fills the cache")
    first = subprocess.run([sys.executable, me, "child"], timeout=40, **child_kwargs())
    note(f"first run exited with {exit_code(first.returncode)}")
    entries = [f for f in os.listdir(path) if f.endswith("-cache")]
for e in entries:
    os.chmod(os.path.join(path, e), 0)
note("entries made unreadable (mode 000): " + ", ".join(sorted(entries)))
kw = child_kwargs()
if sys.argv[1] == "raise":
    kw["env"] = {**kw["env"], "JAX_RAISE_PERSISTENT_CACHE_ERRORS": "true"}
note(f"second run ({sys.argv[1]}): the restart reads the cache")
second = subprocess.run([sys.executable, me, "child"], timeout=40, **kw)
note(f"second run exited with {exit_code(second.returncode)}")
for e in entries:
    os.chmod(os.path.join(path, e), stat.S_IRUSR | stat.S_IWUSR)
sys.exit(exit_code(second.returncode))
