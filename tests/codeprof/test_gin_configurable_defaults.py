"""The keyword defaults of an entry script's gin-configurable function are the run's settings unless a flag
passed into the call or a gin binding replaces them."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import gin
import tensorflow as tf
from absl import app, flags

flags.DEFINE_integer("num_iterations", None, "Iterations to run.")
flags.DEFINE_multi_string("gin_file", None, "Gin files.")
FLAGS = flags.FLAGS


@gin.configurable
def train_eval(root_dir, env_name="Pong", num_iterations=1000000, batch_size=64, learning_rate=1e-4):
    agent = make_agent(learning_rate)
    for _ in range(num_iterations):
        experience = buffer.sample(batch_size)
        agent.train(experience)


def main(_):
    gin.parse_config_files_and_bindings(FLAGS.gin_file, None)
    train_eval("/tmp/run", num_iterations=FLAGS.num_iterations)


if __name__ == "__main__":
    app.run(main)
"""


def test_a_gin_configurable_functions_keyword_default_is_the_batch(tmp_path):
    make_job(tmp_path, {"train_eval.py": TRAIN})
    f = analyze_code(tmp_path, "python train_eval.py --num_iterations=5000", use_llm=False).facts
    assert f["micro_batch_size"].value == 64
    assert f["train_steps"].value == 5000  # the flag passed into the call, not the function's default


def test_a_gin_binding_replaces_the_configurable_default(tmp_path):
    make_job(tmp_path, {"train_eval.py": TRAIN, "configs/big.gin": "train_eval.batch_size = 256\n"})
    f = analyze_code(tmp_path, "python train_eval.py --num_iterations=5000 --gin_file=configs/big.gin",
                     use_llm=False).facts
    assert f["micro_batch_size"].value == 256
