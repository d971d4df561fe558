"""A JAX job that jits on the default device (no pmap, sharding or device counts anywhere) uses one GPU;
absl defaults written as `int(1e6)` are numbers; a training loop that starts at minus the pre-training steps
runs for stop - start steps."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import jax
import optax
from absl import app, flags

flags.DEFINE_integer("batch_size", 128, "Mini batch size.")
flags.DEFINE_integer("max_steps", int(5e5), "Number of training steps.")
flags.DEFINE_integer("num_pretraining_steps", int(2e5), "Offline steps before the online ones.")
FLAGS = flags.FLAGS


@jax.jit
def update(state, batch):
    grads = jax.grad(loss_fn)(state.params, batch)
    return state.apply_gradients(grads=grads)


def main(_):
    for i in range(1 - FLAGS.num_pretraining_steps, FLAGS.max_steps + 1):
        state = update(state, buffer.sample(FLAGS.batch_size))


if __name__ == "__main__":
    app.run(main)
"""


def test_a_jitted_jax_loop_with_no_multi_device_code_runs_on_one_gpu(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["num_gpus"].value == 1 and f["micro_batch_size"].value == 128


def test_a_loop_starting_at_minus_the_pretraining_steps_runs_both_phases(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["train_steps"].value == 700000  # int(5e5) + 1 - (1 - int(2e5))


def test_a_pmapped_jax_job_leaves_the_gpu_count_to_the_devices_present(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("@jax.jit", "@jax.pmap")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "num_gpus" not in f or f["num_gpus"].value is None
