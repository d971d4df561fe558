"""A config's data-loading benchmark section (`BENCHMARK.NUM_EPOCHS`), an RL data-collection section, a named
evaluation set (`_coco_eval`) and a learning-rate schedule (`lr_multiplier`) are not the training run: their counts are never read under the bare leaf name."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.params import training_leaf
from tests.codeprof.codeprof_support import make_job

CONFIG = """
benchmark:
  num_epochs: 3
solver:
  max_epoch: 12
train:
  batch_size: 16
"""


def test_the_sections_are_not_training_leaves() -> None:
    assert not training_leaf("benchmark.num_epochs")
    assert not training_leaf("collection.train.config.num_steps")
    assert training_leaf("solver.max_epoch")


def test_the_solver_epochs_win_over_the_benchmark_epochs(tmp_path: Path) -> None:
    make_job(tmp_path, {"cfg.yaml": CONFIG, "train.py": """
        import argparse
        import yaml

        p = argparse.ArgumentParser()
        p.add_argument("--cfg")
        args = p.parse_args()
        cfg = yaml.safe_load(open(args.cfg))
    """})
    assert analyze_code(tmp_path, command="python train.py --cfg cfg.yaml", use_llm=False).value("epochs") == 12


def test_a_named_evaluation_set_and_a_learning_rate_schedule_are_not_training_leaves() -> None:
    assert not training_leaf("_coco_eval.loader.local_batch_size")
    assert not training_leaf("lr_multiplier.scheduler.num_updates")
    assert not training_leaf("lr_scheduler.total_steps")
    assert training_leaf("train.max_iter")
    assert training_leaf("interval_train.max_iter")


def test_a_train_and_eval_function_is_the_training_run() -> None:
    assert training_leaf("train_eval.batch_size")
    assert training_leaf("train_and_eval.batch_size")
