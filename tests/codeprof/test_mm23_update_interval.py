"""An optimizer hook's `update_interval` accumulates gradients; a loader built with `per_gpu // update_interval`
makes each pass a slice of the config's per-GPU batch.

Fixtures are written for these tests in the style of mmcv 1.x codebases (a `dist_train.sh CONFIG GPUS`
launcher, a `_base_` data config, the job's own `apis/train.py`), with invented names and numbers.
"""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job
from tests.codeprof.test_mm23_readme_params import LAUNCHER  # the same dist_train.sh-style launcher

TRAIN = """\
import argparse
from mmcv import Config
from kelp.apis import train_model
parser = argparse.ArgumentParser()
parser.add_argument('config')
parser.add_argument('--launcher', default='none')
args = parser.parse_args()
cfg = Config.fromfile(args.config)
train_model(cfg)
"""
APIS_PLAIN = """\
def train_model(cfg):
    loader = build_dataloader(dataset, cfg.data.videos_per_gpu, cfg.data.workers_per_gpu)
    return loader
"""
APIS_DIVIDING = """\
def train_model(cfg):
    loader_cfg = dict(
        videos_per_gpu=cfg.data.get('videos_per_gpu', 1) // cfg.optimizer_config.get('update_interval', 1),
        workers_per_gpu=cfg.data.get('workers_per_gpu', 1))
    return build_dataloader(dataset, **loader_cfg)
"""
BASE_DATA = "data = dict(imgs_per_gpu=24, workers_per_gpu=3)\n"
CONFIG = """\
_base_ = ['../_base_/data_bs24.py']
every = 6  # 24 x 6 accumulations x 4 GPUs
optimizer_config = dict(update_interval=every, grad_clip=None)
runner = dict(type='EpochBasedRunner', max_epochs=70)
"""


def _facts(tmp_path: Path, apis: str, config: str, base: str = BASE_DATA) -> dict[str, object]:
    make_job(tmp_path, {"tools/dist_train.sh": LAUNCHER, "tools/train.py": TRAIN, "kelp/__init__.py": "",
                        "kelp/apis/__init__.py": "from .train import train_model\n", "kelp/apis/train.py": apis,
                        "cfgs/_base_/data_bs24.py": base, "cfgs/job/run_4xb24_acc6.py": config})
    prof = analyze_code(tmp_path, "bash tools/dist_train.sh cfgs/job/run_4xb24_acc6.py 4", use_llm=False)
    return {k: v.value for k, v in prof.facts.items()}


def test_update_interval_of_the_optimizer_hook_multiplies_the_global_batch(tmp_path: Path) -> None:
    got = _facts(tmp_path, APIS_PLAIN, CONFIG)
    assert got["micro_batch_size"] == 24 and got["grad_accum_steps"] == 6
    assert got["global_batch_size"] == 24 * 6 * 4 and got["num_gpus"] == 4


def test_a_loader_built_with_the_batch_divided_by_update_interval_makes_the_micro_batch_a_slice(
    tmp_path: Path,
) -> None:
    base = "data = dict(videos_per_gpu=24, workers_per_gpu=3)\n"
    got = _facts(tmp_path, APIS_DIVIDING, CONFIG.replace("every = 6", "every = 3"), base)
    assert got["micro_batch_size"] == 8 and got["grad_accum_steps"] == 3
    assert got["global_batch_size"] == 8 * 3 * 4


def test_an_update_interval_of_one_changes_nothing(tmp_path: Path) -> None:
    got = _facts(tmp_path, APIS_DIVIDING, CONFIG.replace("every = 6", "every = 1"))
    assert got["micro_batch_size"] == 24 and got["global_batch_size"] == 96
