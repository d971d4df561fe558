"""Flax models a learner object builds in its `__init__` (flax_learners.py) and parameters whose size only their
initialiser lambda gives (flax_params.py), on fixtures written for these tests; every expected count is worked
out by hand in the test."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize import count_entry_model

from .codeprof_support import file_readers, make_job, params_of

NETS = '''
import flax.linen as nn
import jax.numpy as jnp


class Trunk(nn.Module):
    sizes: tuple

    @nn.compact
    def __call__(self, x):
        for s in self.sizes:
            x = nn.relu(nn.Dense(s)(x))
        return x


class DetPolicy(nn.Module):
    sizes: tuple
    action_dim: int

    @nn.compact
    def __call__(self, obs):
        return nn.tanh(nn.Dense(self.action_dim)(Trunk(self.sizes)(obs)))


class GaussPolicy(nn.Module):
    sizes: tuple
    action_dim: int

    @nn.compact
    def __call__(self, obs, temperature=1.0):
        mean = nn.Dense(self.action_dim)(Trunk(self.sizes)(obs))
        log_std = self.param("log_std", nn.initializers.zeros, (self.action_dim,))
        return mean, jnp.exp(log_std) * temperature


class Critic(nn.Module):
    sizes: tuple

    @nn.compact
    def __call__(self, obs, act):
        return nn.Dense(1)(Trunk(self.sizes)(jnp.concatenate([obs, act], -1)))


class TwinCritic(nn.Module):
    sizes: tuple

    @nn.compact
    def __call__(self, obs, act):
        return Critic(self.sizes)(obs, act), Critic(self.sizes)(obs, act)
'''

LEARNER = '''
import jax
import optax

from agents.nets import Critic, DetPolicy, GaussPolicy, TwinCritic


class PolicyLearner:
    def __init__(self, seed, observations, actions, actor_lr=3e-4, hidden_dims=(256, 256), kind="gauss"):
        rng = jax.random.PRNGKey(seed)
        rng, k1, k2 = jax.random.split(rng, 3)
        action_dim = actions.shape[-1]
        if kind == "det":
            actor_def = DetPolicy(hidden_dims, action_dim)
        else:
            actor_def = GaussPolicy(hidden_dims, action_dim)
        self.actor = TrainState.create(actor_def, [k1, observations], optax.adam(actor_lr))
        critic_def = TwinCritic(hidden_dims)
        self.critic = TrainState.create(critic_def, [k2, observations, actions], optax.adam(actor_lr))
        target_critic_def = TwinCritic(hidden_dims)
        self.target = TrainState.create(target_critic_def, [k2, observations, actions], None)
'''

TRAIN = '''
import gym
from absl import app, flags
from ml_collections import config_flags

from agents.learner import PolicyLearner

FLAGS = flags.FLAGS
flags.DEFINE_string("env_name", "Hopper-v3", "Environment.")
flags.DEFINE_integer("seed", 7, "Seed.")
flags.DEFINE_integer("batch_size", 128, "Batch.")
flags.DEFINE_integer("max_steps", 200000, "Updates.")
config_flags.DEFINE_config_file("config", "configs/small.py", "Learner settings.")


def main(_):
    env = gym.make(FLAGS.env_name)
    kwargs = dict(FLAGS.config)
    kwargs["actor_lr"] = 1e-4
    agent = PolicyLearner(FLAGS.seed, env.observation_space.sample()[None], env.action_space.sample()[None],
                          **kwargs)
    for i in range(FLAGS.max_steps):
        agent.update(i, FLAGS.batch_size)


if __name__ == "__main__":
    app.run(main)
'''

CONFIG = '''
import ml_collections


def get_config():
    config = ml_collections.ConfigDict()
    config.hidden_dims = (64, 64)
    config.kind = "det"
    return config
'''


def _job(tmp_path: Path, config: str = CONFIG) -> Path:
    return make_job(tmp_path, {"agents/__init__.py": "", "agents/nets.py": NETS, "agents/learner.py": LEARNER,
                               "configs/small.py": config, "train.py": TRAIN})


def test_a_learner_objects_flax_definitions_are_counted_with_the_config_files_widths_and_branch(tmp_path: Path) -> None:
    # Hopper: 11 observations, 3 actions; the config gives hidden (64, 64) and the deterministic policy.
    # DetPolicy: 11*64+64 = 768, 64*64+64 = 4160, 64*3+3 = 195 -> 5123
    # TwinCritic: two Critics of (11+3)*64+64 = 960, 4160, 64+1 = 65 -> 2 * 5185 = 10370
    # the target critic is the same class (counted once): 5123 + 10370 = 15493
    assert params_of(_job(tmp_path), "python train.py --config=configs/small.py") == 15493


def test_the_learners_other_branch_follows_the_config_setting(tmp_path: Path) -> None:
    # kind "gauss": GaussPolicy = the same trunk and mean head (5123) + log_std (3,) = 5126; critics 10370
    config = CONFIG.replace('config.kind = "det"', 'config.kind = "gauss"')
    assert params_of(_job(tmp_path, config), "python train.py --config=configs/small.py") == 5126 + 10370


ONE_FILE = '''
import flax.linen as nn
import jax.numpy as jnp


class Head(nn.Module):
    sizes: tuple
    action_dim: int

    @nn.compact
    def __call__(self, obs):
        for s in self.sizes:
            obs = nn.Dense(s)(obs)
        return nn.Dense(self.action_dim)(obs)


class Learner:
    def __init__(self, seed, observations, actions, hidden_dims=(40, 40), mode="a"):
        action_dim = actions.shape[-1]
        if mode == "a":
            head_def = Head(hidden_dims, action_dim)
        else:
            head_def = Head(hidden_dims, action_dim + 1)
        self.head = create(head_def, observations)


def main():
    kwargs = dict(FLAGS.config)
    agent = Learner(0, obs, act, **kwargs)
'''


def test_config_keys_the_resolver_knows_override_the_learners_defaults(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(ONE_FILE)
    got = count_entry_model(*file_readers(tmp_path, {"FLAGS.config.hidden_dims": (10,)}), "train.py", (6, 2))
    # Head over 6 observations: 6*10+10 = 70, 10*2+2 = 22 -> 92 (mode keeps its default "a")
    assert got is not None and got[0] == 92


def test_a_learner_whose_keyword_mapping_cannot_be_read_is_not_counted(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(ONE_FILE.replace("**kwargs)", "**load_settings())"))
    assert count_entry_model(*file_readers(tmp_path), "train.py", (6, 2)) is None


def test_a_learner_given_a_config_the_resolver_cannot_read_is_not_counted_with_its_defaults(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(ONE_FILE)
    assert count_entry_model(*file_readers(tmp_path), "train.py", (6, 2)) is None


def test_a_learner_branch_on_an_unknown_setting_is_not_counted(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(ONE_FILE.replace("**kwargs)", "mode=FLAGS.mode, **kwargs)"))
    assert count_entry_model(*file_readers(tmp_path), "train.py", (6, 2)) is None


TEMPERATURE = '''
import flax.linen as nn
import jax.numpy as jnp


class Temperature(nn.Module):
    start: float = 0.5

    @nn.compact
    def __call__(self):
        log_t = self.param("log_t", lambda key: jnp.array([jnp.log(self.start)]))
        grid = self.param("grid", lambda key: jnp.zeros((3, 4)))
        bias = self.param("bias", lambda key: jnp.full((), 0.1))
        return jnp.exp(log_t) * grid + bias


temperature = Temperature()
'''


def test_a_parameter_sized_only_by_its_initialiser_lambda_is_counted(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TEMPERATURE)
    got = count_entry_model(*file_readers(tmp_path), "train.py", None)
    # log_t [1 value] + grid 3*4 + bias () = 1 + 12 + 1 = 14
    assert got is not None and got[0] == 14


def test_an_initialiser_lambda_whose_result_is_not_plain_leaves_no_count(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TEMPERATURE.replace("lambda key: jnp.zeros((3, 4))", "lambda key: make(key)"))
    assert count_entry_model(*file_readers(tmp_path), "train.py", None) is None
