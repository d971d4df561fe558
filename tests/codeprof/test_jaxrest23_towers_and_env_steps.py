"""TensorFlow tower code over the GPUs a job lists itself (static/tf_towers.py) and RL step names that count
environment steps (static/rl_env_steps.py), on fixtures written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TOWER_UTILS = '''
import tensorflow as tf
from tensorflow.python.client import device_lib


def local_gpus():
    return [d.name for d in device_lib.list_local_devices() if d.device_type == "GPU"]


def split_over_gpus(fn, batch):
    n = max(1, len(local_gpus()))
    outs = []
    for k, part in enumerate(tf.split(batch, n)):
        with tf.device(tf.train.replica_device_setter(worker_device="/gpu:%d" % k, ps_device="/cpu:0")):
            outs.append(fn(part))
    return outs
'''

TOWER_MAIN = '''
import tensorflow as tf
from absl import app, flags
from towers import split_over_gpus

flags.DEFINE_integer("train_kimg", 1024, "training length in kibi-images")
flags.DEFINE_integer("batch", 32, "labelled batch")
FLAGS = flags.FLAGS


def main(_):
    x = tf.placeholder(tf.float32, [None, 8])
    logits = split_over_gpus(lambda t: tf.layers.dense(t, 4), x)
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            sess.run(logits)


if __name__ == "__main__":
    app.run(main)
'''


def test_tower_code_runs_on_the_gpus_the_submitter_makes_visible(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"towers.py": TOWER_UTILS, "semi.py": TOWER_MAIN})
    prof = analyze_code(job, command="CUDA_VISIBLE_DEVICES=2,3,5 python semi.py", use_llm=False)
    assert prof.value("num_gpus") == 3


def test_tower_code_without_visible_devices_leaves_the_gpu_count_open(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"towers.py": TOWER_UTILS, "semi.py": TOWER_MAIN})
    prof = analyze_code(job, command="python semi.py", use_llm=False)
    assert prof.value("num_gpus") is None


def test_a_plain_tensorflow_script_still_computes_on_one_gpu(tmp_path: Path) -> None:
    plain = TOWER_MAIN.replace("from towers import split_over_gpus\n", "").replace(
        "split_over_gpus(lambda t: tf.layers.dense(t, 4), x)", "tf.layers.dense(x, 4)")
    job = make_job(tmp_path, {"semi.py": plain})
    prof = analyze_code(job, command="CUDA_VISIBLE_DEVICES=2,3,5 python semi.py", use_llm=False)
    assert prof.value("num_gpus") == 1


AGENT = '''
import gym
import numpy as np


def train(env_name="CartPole-v1", n_steps={n_steps}, learning_rate=3e-4, batch_size=64):
    env = gym.make(env_name)
    obs = env.reset()
    for t in range(n_steps):
        obs, reward, done, info = env.step(env.action_space.sample())
    return obs


if __name__ == "__main__":
    train()
'''


def test_a_rollout_horizon_named_n_steps_is_not_a_count_of_optimizer_steps(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"run_agent.py": AGENT.format(n_steps=256)})
    prof = analyze_code(job, command="python run_agent.py", use_llm=False)
    assert prof.value("train_steps") is None


def test_n_steps_outside_an_environment_job_is_still_a_step_count(tmp_path: Path) -> None:
    text = AGENT.format(n_steps=256).replace("import gym\n", "").replace(
        "env = gym.make(env_name)", "env = None")
    job = make_job(tmp_path, {"run_agent.py": text})
    prof = analyze_code(job, command="python run_agent.py", use_llm=False)
    assert prof.value("train_steps") == 256


OFFLINE_FIT = '''
import gym
import offline_rl


def main():
    env = gym.make("Pong-v4")
    dataset = offline_rl.load_transitions("pong-expert")
    algo = offline_rl.ConservativeQ(batch_size=128)
    algo.fit({first}, n_steps=400000, n_steps_per_epoch=10000)


if __name__ == "__main__":
    main()
'''


def test_an_offline_fit_on_a_dataset_keeps_n_steps_as_its_gradient_steps(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"offline_pong.py": OFFLINE_FIT.format(first="dataset")})
    prof = analyze_code(job, command="python offline_pong.py", use_llm=False)
    assert prof.value("train_steps") == 400000


def test_a_fit_on_an_environment_counts_environment_steps(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"offline_pong.py": OFFLINE_FIT.format(first="env")})
    prof = analyze_code(job, command="python offline_pong.py", use_llm=False)
    assert prof.value("train_steps") is None
