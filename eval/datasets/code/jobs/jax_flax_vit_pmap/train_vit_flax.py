"""Vision Transformer (ViT-B/16) with Flax, data parallel via jax.pmap over all local devices."""
import argparse
import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class ViT(nn.Module):
    patch: int = 16
    hidden: int = 768
    depth: int = 12
    heads: int = 12
    num_classes: int = 1000
    dtype: jnp.dtype = jnp.bfloat16

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(self.hidden, (self.patch, self.patch), strides=self.patch, dtype=self.dtype)(x)
        x = x.reshape(x.shape[0], -1, self.hidden)
        for _ in range(self.depth):
            y = nn.LayerNorm(dtype=self.dtype)(x)
            x = x + nn.SelfAttention(num_heads=self.heads, dtype=self.dtype)(y)
            x = x + nn.Dense(self.hidden, dtype=self.dtype)(nn.gelu(nn.Dense(4 * self.hidden, dtype=self.dtype)(x)))
        return nn.Dense(self.num_classes)(x.mean(1))


@functools.partial(jax.pmap, axis_name="batch")
def train_step(state, images, labels):
    def loss_fn(p):
        logits = state.apply_fn({"params": p}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    grads = jax.lax.pmean(jax.grad(loss_fn)(state.params), "batch")
    return state.apply_gradients(grads=grads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per_device_batch_size", type=int, default=128)
    ap.add_argument("--num_epochs", type=int, default=90)
    args = ap.parse_args()
    n_dev = jax.local_device_count()
    model = ViT()
    params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 224, 224, 3)))["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adamw(3e-4))
    state = jax.device_put_replicated(state, jax.local_devices())
    for epoch in range(args.num_epochs):
        images = jnp.zeros((n_dev, args.per_device_batch_size, 224, 224, 3))
        labels = jnp.zeros((n_dev, args.per_device_batch_size), jnp.int32)
        state = train_step(state, images, labels)


if __name__ == "__main__":
    main()
