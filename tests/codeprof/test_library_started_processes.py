"""A library that starts its own training processes from the job's config (super-gradients recipes)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

ENTRY = """\
import hydra
from omegaconf import DictConfig
from super_gradients import Trainer, init_trainer


@hydra.main(config_path="recipes", version_base="1.2")
def run(cfg: DictConfig) -> None:
    Trainer.train_from_config(cfg)


if __name__ == "__main__":
    init_trainer()
    run()
"""

RECIPE = """\
defaults:
  - training_hyperparams: short_schedule
  - _self_

architecture: resnet18
multi_gpu: {mode}
num_gpus: {n}
dataset_params:
  train_dataloader_params:
    batch_size: 24
"""

SCHEDULE = "max_epochs: 30\n"


def job(tmp_path: Path, mode: str, n: int) -> dict:
    wd = make_job(tmp_path, {"train_recipe.py": ENTRY, "recipes/my_recipe.yaml": RECIPE.format(mode=mode, n=n),
                             "recipes/training_hyperparams/short_schedule.yaml": SCHEDULE})
    return analyze_code(wd, "python train_recipe.py --config-name=my_recipe", use_llm=False).facts


def test_a_ddp_recipe_runs_one_process_per_gpu_it_names(tmp_path: Path):
    f = job(tmp_path, "DDP", 8)
    assert f["num_gpus"].value == 8
    assert f["micro_batch_size"].value == 24 and f["global_batch_size"].value == 24 * 8
    assert f["epochs"].value == 30


def test_a_recipe_with_multi_gpu_off_trains_on_one_gpu(tmp_path: Path):
    f = job(tmp_path, "Off", 4)
    assert f["num_gpus"].value == 1 and f["global_batch_size"].value == 24


def test_a_recipe_leaving_the_mode_to_auto_does_not_fix_the_gpu_count(tmp_path: Path):
    f = job(tmp_path, "AUTO", 4)
    assert "num_gpus" not in f and "global_batch_size" not in f
    assert f["micro_batch_size"].value == 24
