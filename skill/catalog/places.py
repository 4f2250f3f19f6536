"""What a program's death points to by where and when it happened (issue 41), as data: the classes the place-and-phase
rules of skill/judging/place.py name, and the libraries they recognise on top of a traceback. Each entry says why."""

from __future__ import annotations

# A colocated Python sidecar's death (its container: colocated-python-sidecar, as every launcher names it)
SIDECAR = "colocated_python_failure"
# The user's own frame on top of a traceback or fault page, another library raising into the user's program, or the
# client's own flags refused before its first step: the user's code or configuration
USER = "user_code_error"
# Orbax or TensorStore on top: the checkpoint layer failed (the user's use of it stays the rival)
CHECKPOINT = "checkpoint_failure"
CHECKPOINT_LIBS = frozenset({"orbax", "tensorstore"})
# JAX's compile path on top before the first step (jax/_src/compiler.py, interpreters/pxla.py)
COMPILE = "xla_compile_error"
# JAX's own packages: on top while stepping, its runtime failed (memory, hardware, the servers ...): too many to name
JAX_LIBS = frozenset({"jax", "jaxlib", "flax", "optax", "pathwaysutils"})
# The kernel's OOM killer took the process (mm/oom_kill.c's "Killed process <pid> (<comm>)"): host memory
KILLED_FOR_MEMORY = "host_oom"
# The client's flags refused at start-up: a flag this jaxlib/libtpu build does not know is the other reading
FLAGS_RIVAL = "libtpu_mismatch"
