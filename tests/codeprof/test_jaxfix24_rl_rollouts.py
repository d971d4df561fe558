"""An on-policy JAX learner (PureJaxRL style: a dataclass config read from YAML with `num_envs`, `num_steps`,
`num_minibatches`, `update_epochs`, `total_timesteps`) trains for rollouts x epochs x minibatches optimizer
steps, not for its rollout length; a `pmap` passed to `partial` splits its minibatch over the devices, so the
per-device batch stays open; a meta-RL config nesting rollouts in longer episodes leaves the steps null."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.params import CONFIG, ParamSpace
from schedmate.codeprof.static.rl_batch import rollout_updates
from tests.codeprof.codeprof_support import make_job

TRAIN = '''
from dataclasses import dataclass
from functools import partial

import jax
import pyrallis


@dataclass
class Config:
    env_name: str = "Maze-9x9"
    num_envs: int = 64
    num_steps: int = 32
    update_epochs: int = 2
    num_minibatches: int = 8
    total_timesteps: int = 100_000
    gamma: float = 0.99
    ent_coef: float = 0.01


def make_train(config):
    @partial(jax.pmap, axis_name="devices")
    def train(rng):
        return rng
    return train


@pyrallis.wrap()
def main(config: Config):
    make_train(config)(jax.random.split(jax.random.PRNGKey(0), jax.local_device_count()))


if __name__ == "__main__":
    main()
'''

YAML = """
num_envs: 2048
num_steps: 128
update_epochs: 3
num_minibatches: 8
total_timesteps: 50_000_000
"""


def _params(**values: int) -> ParamSpace:
    P = ParamSpace()
    for k, v in values.items():
        P.set(k, v, f"cfg.yaml:{k}", CONFIG)
    return P


def test_the_optimizer_steps_are_rollouts_times_epochs_times_minibatches():
    P = _params(total_timesteps=1_000_000, num_envs=100, num_steps=50, update_epochs=4, num_minibatches=5)
    assert rollout_updates(P)[0] == 200 * 4 * 5  # type: ignore[index]


def test_a_config_without_stated_epochs_or_with_nested_rollouts_gives_no_count():
    assert rollout_updates(_params(total_timesteps=10**6, num_envs=100, num_steps=50, num_minibatches=5)) is None
    assert rollout_updates(_params(total_timesteps=10**6, num_envs=100, num_steps=50, update_epochs=1,
                                   num_minibatches=5, num_steps_per_env=500)) is None


def test_a_pmapped_learner_read_from_yaml_trains_for_its_updates_with_an_open_per_device_batch(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "configs/run.yaml": YAML})
    f = analyze_code(tmp_path, "python train.py --config_path configs/run.yaml", use_llm=False).facts
    assert f["train_steps"].value == (50_000_000 // (2048 * 128)) * 3 * 8
    assert f["global_batch_size"].value == 2048 * 128 // 8
    assert "micro_batch_size" not in f or f["micro_batch_size"].value is None
