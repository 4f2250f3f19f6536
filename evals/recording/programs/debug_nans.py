"""jax_debug_nans (JAX_DEBUG_NANS=True): the batch at step 4 holds a negative value fed to log, so the step's loss is NaN."""

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()} debug_nans={jax.config.jax_debug_nans}")


@jax.jit
def train_step(w, x):
    loss, g = jax.value_and_grad(lambda w: jnp.mean(jnp.log(x @ w)))(w)
    return w - 0.01 * g, loss


w = jnp.full((128, 1), 0.1)
for step in range(8):
    x = jnp.full((32, 128), 1.0 + step)
    if step == 4:
        x = x.at[7, :].set(-1.0)  # a corrupt record in the input pipeline
    w, loss = train_step(w, x)
    print(f"step {step} loss {float(loss):.6f}")
