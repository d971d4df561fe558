"""In a job that steps environments, epochs beside a rollout or an environment budget are not dataset passes,
an on-policy step count that is not rollouts x epochs x minibatches is dropped, and an IMPALA budget in
environment steps is divided by the transitions of one learner step."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

PPO_EPOCHS = """
import argparse
import gym

parser = argparse.ArgumentParser()
parser.add_argument("--env", required=True)
parser.add_argument("--frames", type=int, default=10**6, help="environment frames to train for")
parser.add_argument("--epochs", type=int, default=4, help="passes over each rollout")
parser.add_argument("--batch-size", type=int, default=256)
args = parser.parse_args()
env = gym.make(args.env)
"""

BLOCKS = """
import argparse
import gym


def learn(env_fn, steps_per_epoch=2000, epochs=100, batch_size=64):
    env = env_fn()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    learn(lambda: gym.make("Pendulum-v1"), epochs=args.epochs)
"""

DATASET_EPOCHS = """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=7)
parser.add_argument("--frames", type=int, default=16, help="frames per video clip")
args = parser.parse_args()
"""

ON_POLICY = """
import argparse
import gym

parser = argparse.ArgumentParser()
parser.add_argument("--algo", default="ppo")
parser.add_argument("--num-processes", type=int, default=8)
parser.add_argument("--num-steps", type=int, default=64)
parser.add_argument("--num-mini-batch", type=int, default=4)
parser.add_argument("--num-env-steps", type=int, default=1024000)
args = parser.parse_args()
num_updates = args.num_env_steps // args.num_steps // args.num_processes
envs = [gym.make("CartPole-v1") for _ in range(args.num_processes)]
for j in range(num_updates):
    pass
"""

IMPALA = """
import argparse
import gym

parser = argparse.ArgumentParser()
parser.add_argument("--env", default="PongNoFrameskip-v4")
parser.add_argument("--num_actors", type=int, default=8)
parser.add_argument("--total_steps", type=int, default=1000000)
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--unroll_length", type=int, default=50)
parser.add_argument("--entropy_cost", type=float, default=0.01)
flags = parser.parse_args()
env = gym.make(flags.env)
"""


def test_ppo_epochs_beside_a_frame_budget_are_dropped(tmp_path: Path) -> None:
    make_job(tmp_path, {"train.py": PPO_EPOCHS})
    prof = analyze_code(tmp_path, command="python train.py --env CartPole-v1", use_llm=False)
    assert prof.value("epochs") is None
    assert any(w.startswith("epochs: 4 dropped") for w in prof.warnings)


def test_epochs_of_environment_step_blocks_are_dropped(tmp_path: Path) -> None:
    make_job(tmp_path, {"algo.py": BLOCKS})
    assert analyze_code(tmp_path, command="python algo.py", use_llm=False).value("epochs") is None


def test_epochs_of_a_job_that_steps_no_environment_are_kept(tmp_path: Path) -> None:
    make_job(tmp_path, {"train.py": DATASET_EPOCHS})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("epochs") == 7


def test_an_on_policy_rollout_count_is_not_the_optimizer_steps(tmp_path: Path) -> None:
    make_job(tmp_path, {"main.py": ON_POLICY})
    prof = analyze_code(tmp_path, command="python main.py", use_llm=False)
    assert prof.value("train_steps") is None
    assert any(w.startswith("train_steps:") and "dropped" in w for w in prof.warnings)


def test_a_whole_rollout_learner_keeps_its_update_count(tmp_path: Path) -> None:
    make_job(tmp_path, {"main.py": ON_POLICY})
    prof = analyze_code(tmp_path, command="python main.py --algo a2c", use_llm=False)
    assert not any(w.startswith("train_steps:") and "dropped" in w for w in prof.warnings)


def test_an_impala_budget_is_divided_by_the_transitions_per_learner_step(tmp_path: Path) -> None:
    make_job(tmp_path, {"learner.py": IMPALA})
    prof = analyze_code(tmp_path, command="python learner.py --total_steps 4000000", use_llm=False)
    assert prof.value("global_batch_size") == 400
    assert prof.value("train_steps") == 10000


ABSL_ENV_STEPS = """
from absl import app, flags
import gym

flags.DEFINE_integer("num_steps", 500000, "Number of env steps to run.")
flags.DEFINE_integer("batch_size", 128, "Replay batch.")
FLAGS = flags.FLAGS


def main(_):
    env = gym.make("Hopper-v4")


if __name__ == "__main__":
    app.run(main)
"""


def test_a_step_flag_documented_as_environment_steps_is_dropped(tmp_path: Path) -> None:
    make_job(tmp_path, {"run.py": ABSL_ENV_STEPS})
    prof = analyze_code(tmp_path, command="python run.py", use_llm=False)
    assert prof.value("train_steps") is None
    assert any("documented as counting environment steps" in w for w in prof.warnings)


def test_a_count_computed_from_an_environment_step_option_is_not_dropped_for_its_help(tmp_path: Path) -> None:
    documented = ON_POLICY.replace('default=1024000)', 'default=1024000, help="number of environment steps")')
    make_job(tmp_path, {"main.py": documented})
    prof = analyze_code(tmp_path, command="python main.py --algo a2c", use_llm=False)
    assert not any("documented as counting environment steps" in w for w in prof.warnings)
