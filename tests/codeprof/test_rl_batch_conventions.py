"""What "the batch" is in RL jobs: unrolls x unroll length for IMPALA-style learners, and the minibatch a
single-file agent derives from its run-config dict."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

LEARNER = """
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_workers", 6, "Actor processes.")
flags.DEFINE_integer("batch_size", 4, "Trajectories per learner step.")
flags.DEFINE_integer("unroll_length", 50, "Agent steps per trajectory.")
flags.DEFINE_integer("total_frames", 1000000, "Frames to train for.")


def main(_):
    import tensorflow as tf
    with tf.device("/gpu"):
        learner_step(FLAGS.batch_size, FLAGS.unroll_length)


if __name__ == "__main__":
    app.run(main)
"""

SEED_STYLE = """
from absl import app, flags

flags.DEFINE_integer("batch_size", 2, "Batch size in unrolls.")
flags.DEFINE_integer("batch_size_transitions", 0, "Batch size in transitions.")
flags.DEFINE_integer("unroll_length", 20, "Unroll length.")
flags.DEFINE_float("discounting", 0.99, "Discount factor.")


def main(_):
    import tensorflow as tf
    run(tf)


if __name__ == "__main__":
    app.run(main)
"""

AGENT = """
import jax


def build(cfg):
    cfg["UPDATES"] = cfg["BUDGET"] // cfg["ENVS"] // cfg["HORIZON"]
    cfg["MINIBATCH_SIZE"] = cfg["ENVS"] * cfg["HORIZON"] // cfg["N_MINIBATCHES"]

    def train(key):
        return key

    return train


if __name__ == "__main__":
    config = {"ENVS": 16, "HORIZON": 64, "N_MINIBATCHES": 8, "BUDGET": 1e6, "LR": 3e-4, "GAMMA": 0.98}
    out = jax.jit(build(config))(jax.random.PRNGKey(0))
"""

REPLAY_AGENT = """
import jax


def main():
    config = {"ENVS": 4, "REPLAY_SIZE": 50000, "SAMPLE_BATCH_SIZE": 96, "EVAL_BATCH_SIZE": 10, "LR": 1e-3}
    jax.jit(make_train(config))(jax.random.PRNGKey(1))


if __name__ == "__main__":
    main()
"""


def test_an_impala_style_learner_trains_on_unrolls_times_their_length(tmp_path: Path):
    job = make_job(tmp_path, {"learner.py": LEARNER})
    f = analyze_code(job, "python learner.py --num_workers=32 --batch_size=8", use_llm=False).facts
    assert f["global_batch_size"].value == 400  # 8 unrolls x 50 steps
    assert f["micro_batch_size"].value == 400  # one learner process


def test_a_transition_count_flag_states_the_learner_batch_directly(tmp_path: Path):
    job = make_job(tmp_path, {"main.py": SEED_STYLE})
    f = analyze_code(job, "python main.py --batch_size=0 --batch_size_transitions=120", use_llm=False).facts
    assert f["global_batch_size"].value == 120


def test_a_zero_transition_count_leaves_unrolls_times_length(tmp_path: Path):
    job = make_job(tmp_path, {"main.py": SEED_STYLE})
    f = analyze_code(job, "python main.py --batch_size=3", use_llm=False).facts
    assert f["global_batch_size"].value == 60  # 3 x 20


LM = """
import argparse

p = argparse.ArgumentParser()
p.add_argument("--batch_size", type=int, default=20)
p.add_argument("--unroll_length", type=int, default=35, help="truncated BPTT length")
p.add_argument("--epochs", type=int, default=40)
args = p.parse_args()
"""


def test_a_language_model_s_bptt_unroll_does_not_multiply_its_batch(tmp_path: Path):
    job = make_job(tmp_path, {"lm.py": LM})
    f = analyze_code(job, "python lm.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 20
    assert f.get("global_batch_size") is None or f["global_batch_size"].value == 20


def test_a_minibatch_derived_from_the_run_config_dict_is_the_batch(tmp_path: Path):
    job = make_job(tmp_path, {"agents/ppo_agent.py": AGENT})
    f = analyze_code(job, "cd agents && python ppo_agent.py", use_llm=False).facts
    assert f["global_batch_size"].value == 128  # 16 envs x 64 steps / 8 minibatches
    assert f["micro_batch_size"].value == 128


def test_the_run_config_dict_s_one_training_batch_key_is_the_batch(tmp_path: Path):
    job = make_job(tmp_path, {"dqn_agent.py": REPLAY_AGENT})
    f = analyze_code(job, "python dqn_agent.py", use_llm=False).facts
    assert f["global_batch_size"].value == 96  # the evaluation batch is not the training's


ON_POLICY = """
import argparse

p = argparse.ArgumentParser()
p.add_argument("--algo", default="ppo")
p.add_argument("--gamma", type=float, default=0.99)
p.add_argument("--num-processes", type=int, default=12)
p.add_argument("--num-steps", type=int, default=40)
p.add_argument("--num-mini-batch", type=int, default=6)
p.add_argument("--num-env-steps", type=int, default=2000000)
args = p.parse_args()
"""


def test_a_ppo_minibatch_is_envs_times_rollout_steps_over_the_minibatch_count(tmp_path: Path):
    job = make_job(tmp_path, {"main.py": ON_POLICY})
    f = analyze_code(job, "python main.py", use_llm=False).facts
    assert f["global_batch_size"].value == 80  # 12 x 40 / 6


def test_an_a2c_update_takes_the_whole_rollout(tmp_path: Path):
    job = make_job(tmp_path, {"main.py": ON_POLICY})
    f = analyze_code(job, "python main.py --algo a2c --num-steps 5", use_llm=False).facts
    assert f["global_batch_size"].value == 60  # 12 envs x 5 steps, no minibatches
    assert f["micro_batch_size"].value == 60
