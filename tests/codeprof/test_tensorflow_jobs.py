"""One-process TensorFlow/Keras jobs: absl flags, the GPUs a strategy (or its absence) uses, per-device batches."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

BENCH = """\
from absl import flags
import tensorflow as tf

flags.DEFINE_integer('batch_size', 32, 'batch size per compute device')
flags.DEFINE_integer('num_gpus', 1, 'the number of GPUs to run on')
flags.DEFINE_integer('num_epochs', 90, 'passes over the data')
FLAGS = flags.FLAGS


def main(_):
    model = build(FLAGS)
    model.fit(dataset, epochs=FLAGS.num_epochs)
"""


def test_absl_flags_give_defaults_and_a_per_device_batch_over_the_jobs_gpu_count(tmp_path):
    (tmp_path / "bench.py").write_text(BENCH)
    f = analyze_code(tmp_path, "python bench.py --batch_size=256 --num_gpus=8", use_llm=False).facts
    assert f["num_gpus"].value == 8 and f["micro_batch_size"].value == 256 and f["global_batch_size"].value == 2048
    assert f["epochs"].value == 90  # the flag's default


def test_keras_without_a_distribution_strategy_computes_on_one_gpu(tmp_path):
    (tmp_path / "glue.py").write_text(
        "import argparse\nimport keras\np = argparse.ArgumentParser()\np.add_argument('--batch_size', type=int)\n"
        "p.add_argument('--epochs', type=int)\nargs = p.parse_args()\n"
        "model.fit(ds.batch(args.batch_size), epochs=args.epochs)\n")
    f = analyze_code(tmp_path, "python glue.py --batch_size 16 --epochs 5", use_llm=False).facts
    assert f["num_gpus"].value == 1 and f["micro_batch_size"].value == 16 and f["epochs"].value == 5


def test_a_strategy_built_by_a_helper_uses_every_visible_gpu(tmp_path):
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\nimport train_lib\n\n\ndef main():\n"
        "    train_lib.train(strategy=train_lib.get_strategy('gpu'), steps=1000)\n")
    p = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert p.facts.get("num_gpus") is None  # every GPU the job is given: decided at submission
    p = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 python train.py", use_llm=False)
    assert p.facts["num_gpus"].value == 2


def test_python_m_package_module_runs_from_a_repository_that_is_itself_the_package(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "run_classifier.py").write_text(
        "from absl import flags\nimport tensorflow as tf\n"
        "flags.DEFINE_integer('train_batch_size', 32, 'Total batch size for training.')\n"
        "flags.DEFINE_integer('train_step', 1000, 'steps')\n\n\ndef main(_):\n    estimator.train(input_fn)\n")
    f = analyze_code(tmp_path, "python -m albert.run_classifier --train_batch_size=128 --train_step=10000",
                     use_llm=False).facts
    assert f["num_gpus"].value == 1 and f["global_batch_size"].value == 128 and f["micro_batch_size"].value == 128


def test_a_keras_style_fit_call_gives_the_batch_and_the_epochs(tmp_path):
    (tmp_path / "run.py").write_text(
        "import torch\nmodel = DeepFM(features, device='cuda:0')\n"
        "model.fit(x, y, batch_size=32, epochs=10, verbose=2, validation_split=0.2)\n")
    f = analyze_code(tmp_path, "python run.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 32 and f["epochs"].value == 10 and f["num_gpus"].value == 1
