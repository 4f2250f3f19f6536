"""HBM exhausted at compile time: an LM head whose f32 logits (65536 x 128000 = 33.5 GB) cannot fit in 16 GiB."""

import jax
import jax.numpy as jnp

print(f"devices: {jax.devices()}")
activations = jnp.ones((65536, 4096), jnp.bfloat16)  # batch 32 x seq 2048, d_model 4096: 512 MiB
embedding = jnp.ones((128000, 4096), jnp.bfloat16)  # vocabulary 128k: 1 GiB


@jax.jit
def lm_head_loss(x, emb):
    logits = jnp.dot(x, emb.T, preferred_element_type=jnp.float32)
    return jax.nn.logsumexp(logits, axis=-1).mean() - logits[:, 0].mean(), logits


print("compiling the LM head")
loss, _ = lm_head_loss(activations, embedding)
print(f"loss {float(loss)}")
