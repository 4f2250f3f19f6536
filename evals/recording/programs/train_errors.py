"""Errors that appear only after some good training steps:

  callback     a host callback inside the jitted step raises at step 6 (a metrics hook that hits a bad value)
  tracer-bool  the eval step, first compiled at step 5, branches in Python on a traced value
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

mode = sys.argv[1]
print(f"devices: {jax.devices()}")


def record_metrics(step, loss):
    if int(step) == 6:
        raise ValueError(f"metrics hook: loss history length mismatch at step {int(step)}")


@jax.jit
def train_step(w, x, step):
    loss, g = jax.value_and_grad(lambda w: jnp.mean((x @ w - 1.0) ** 2))(w)
    if mode == "callback":
        jax.debug.callback(record_metrics, step, loss)
    return w - 0.01 * g, loss


@jax.jit
def eval_step(w, x, best):
    loss = jnp.mean((x @ w - 1.0) ** 2)
    if loss < best:  # Python control flow on a traced value
        best = loss
    return best


w = jnp.zeros((256, 1))
best = np.inf
for step in range(10):
    w, loss = train_step(w, jnp.full((64, 256), 0.01 * (step + 1)), step)
    print(f"step {step} loss {float(loss):.6f}")
    if step == 5 and mode == "tracer-bool":
        print("running eval")
        best = eval_step(w, jnp.ones((64, 256)), best)
        print(f"eval best {float(best):.6f}")
