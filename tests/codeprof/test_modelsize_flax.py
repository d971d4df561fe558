"""Flax modules counted by following the feature width through `__call__` (flax_modules.py), on fixtures
written for these tests; every expected count is worked out by hand in the test."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize import count_entry_model

from .codeprof_support import file_readers


def _count(tmp_path: Path, text: str, widths: tuple[int, ...] | None) -> tuple[int, list[str]] | None:
    (tmp_path / "train.py").write_text(text)
    return count_entry_model(*file_readers(tmp_path), "train.py", widths)


ENSEMBLE = '''
import flax.linen as nn
import jax.numpy as jnp


class Tower(nn.Module):
    width: int = 32

    @nn.compact
    def __call__(self, obs, act):
        h = jnp.concatenate([obs, act], axis=-1)
        for _ in range(2):
            h = nn.relu(nn.Dense(self.width)(h))
        return nn.Dense(1)(h)


class Ensemble(nn.Module):
    width: int = 32
    copies: int = 3

    @nn.compact
    def __call__(self, obs, act):
        many = nn.vmap(Tower, variable_axes={"params": 0}, split_rngs={"params": True}, in_axes=None,
                       out_axes=0, axis_size=self.copies)
        return many(self.width)(obs, act)


critic = Ensemble(width=32)
'''


def test_a_vmapped_critic_ensemble_counts_every_copy_over_the_observation_and_action_widths(tmp_path: Path) -> None:
    got = _count(tmp_path, ENSEMBLE, (5, 2))
    # one tower: (5 + 2) * 32 + 32, 32 * 32 + 32, 32 + 1 = 256 + 1056 + 33 = 1345; three copies
    assert got is not None and got[0] == 3 * 1345


def test_a_flax_model_whose_input_width_is_not_known_is_not_counted(tmp_path: Path) -> None:
    assert _count(tmp_path, ENSEMBLE, None) is None


SETUP = '''
import flax.linen as nn


class Encoder(nn.Module):
    vocab: int
    dim: int = 16

    def setup(self):
        self.embed = nn.Embed(self.vocab, self.dim)
        self.mix = nn.Dense(self.dim)
        self.norm = nn.LayerNorm()

    def __call__(self, tokens):
        h = self.embed(tokens)
        h = self.mix(h)
        h = self.mix(h)
        scale = self.param("scale", nn.initializers.ones, (self.dim,))
        return nn.Dense(3, use_bias=False)(self.norm(h))


encoder = Encoder(100, dim=16)
'''


def test_setup_layers_called_twice_count_once_with_norms_embeddings_and_own_params(tmp_path: Path) -> None:
    got = _count(tmp_path, SETUP, (1,))
    # Embed 100 x 16 = 1600; Dense 16 -> 16 shared: 272; param 16; LayerNorm 2 x 16 = 32; Dense 16 -> 3 no bias: 48
    assert got is not None and got[0] == 1600 + 272 + 16 + 32 + 48


POLICY = '''
import flax.linen as nn
import gymnax


class Policy(nn.Module):
    action_dim: int
    hidden: int = 16

    @nn.compact
    def __call__(self, x):
        x = nn.tanh(nn.Dense(self.hidden, kernel_init=nn.initializers.orthogonal(1.0))(x))
        logits = nn.Dense(self.action_dim)(x)
        value = nn.Dense(1)(x)
        return logits, value


def make_train(config):
    env, env_params = gymnax.make("Acrobot-v1")

    def train(rng):
        network = Policy(env.action_space(env_params).n)
        return network

    return train
'''


def test_a_policy_sized_by_its_environment_reads_the_action_count_from_the_environment(tmp_path: Path) -> None:
    got = _count(tmp_path, POLICY, (6, 3))
    # Acrobot: 6 observations, 3 actions; 6 * 16 + 16 = 112, 16 * 3 + 3 = 51, 16 + 1 = 17
    assert got is not None and got[0] == 112 + 51 + 17


def test_a_flattened_image_is_not_followed_so_no_count_is_given(tmp_path: Path) -> None:
    text = '''
import flax.linen as nn


class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3))(x)
        x = x.reshape((x.shape[0], -1))
        return nn.Dense(10)(x)


net = Net()
'''
    assert _count(tmp_path, text, (3,)) is None
