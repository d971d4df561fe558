"""A README results table's `Params` cell gives the size of the model the named config trains.

Fixtures are written for these tests in the style of OpenMMLab-based research repositories (a
`tools/dist_train.sh CONFIG GPUS` launcher, mmcv-style configs with `_base_` lists, a results table with
a Params column), with invented names and numbers.
"""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.readme_params import params_fact, readme_params, tokens
from schedmate.codeprof.reader import Workdir
from tests.codeprof.codeprof_support import make_job, params_of

LAUNCHER = """\
CONFIG=$1
GPUS=$2
python -m torch.distributed.launch --nproc_per_node=$GPUS $(dirname "$0")/train.py $CONFIG --launcher pytorch
"""
TRAIN = """\
import argparse
from mmcv import Config
parser = argparse.ArgumentParser()
parser.add_argument('config')
parser.add_argument('--launcher', default='none')
args = parser.parse_args()
cfg = Config.fromfile(args.config)
"""
BASES = {
    "cfgs/_base_/data/city.py": "data = dict(samples_per_gpu=4, workers_per_gpu=2)\n",
    "cfgs/_base_/sched/sched_40k.py": "runner = dict(type='IterBasedRunner', max_iters=40000)\n",
    "cfgs/reef/reef_small.py": ("model = dict(type='EncoderDecoder', backbone=dict(type='ReefNet', dims=[24, 48]),\n"
                                "             decode_head=dict(type='LightHead', channels=96))\n"),
    "cfgs/reef/reef_large.py": ("model = dict(type='EncoderDecoder', backbone=dict(type='ReefNet', dims=[64, 128]),\n"
                                "             decode_head=dict(type='LightHead', channels=192))\n"),
}


def _config(size: str, per_gpu: int) -> str:
    return (f"_base_ = ['../_base_/data/city.py', '../_base_/sched/sched_40k.py', './reef_{size}.py']\n"
            f"data = dict(samples_per_gpu={per_gpu})\n")


def _repo(tmp_path: Path, readme: str) -> Path:
    files = {"tools/dist_train.sh": LAUNCHER, "tools/train.py": TRAIN, "README.md": readme, **BASES,
             "cfgs/reef/reef_small_640x640_40k_3x8_city.py": _config("small", 3),
             "cfgs/reef/reef_large_640x640_40k_3x8_city.py": _config("large", 3),
             "cfgs/reef/reef_large_640x640_40k_6x8_city.py": _config("large", 6)}
    return make_job(tmp_path, files)


NAMED_ROWS = """\
# ReefNet for segmentation

Model | Params | FLOPs | mIoU
--- |:---:|:---:|:---:
ReefNet-S_640x640_3x8_40k | 2.3 | 0.4 | 61.0
ReefNet-L_640x640_3x8_40k | 9.7 | 2.2 | 66.5
ReefNet-L_640x640_6x8_40k | 9.7 | 2.2 | 67.1

Train with `sh tools/dist_train.sh cfgs/reef/<config> 8`.
"""

LINKED_ROWS = """\
| Method | Backbone | Iters | #Param | Config |
| :--: | :----: | :--: | :--: | :--: |
| LightHead | ReefNet-S | 40K | 2.3M | [config](https://example.org/blob/main/cfgs/reef/reef_small_640x640_40k_3x8_city.py) |
| LightHead | ReefNet-L | 40K | 9.7M | [config](https://example.org/blob/main/cfgs/reef/reef_large_640x640_40k_3x8_city.py) |
"""


def test_a_row_named_like_the_config_gives_its_size_with_a_size_letter_read_as_the_word(tmp_path: Path) -> None:
    root = _repo(tmp_path, NAMED_ROWS)
    got = params_of(root, "sh tools/dist_train.sh cfgs/reef/reef_small_640x640_40k_3x8_city.py 8")
    assert got == 2_300_000


def test_two_rows_that_tie_on_the_name_are_taken_when_they_agree(tmp_path: Path) -> None:
    root = _repo(tmp_path, NAMED_ROWS)
    got = params_of(root, "sh tools/dist_train.sh cfgs/reef/reef_large_640x640_40k_6x8_city.py 8")
    assert got == 9_700_000


def test_a_row_linking_to_the_config_file_gives_its_size_with_the_unit_of_the_cell(tmp_path: Path) -> None:
    root = _repo(tmp_path, LINKED_ROWS)
    got = readme_params("cfgs/reef/reef_large_640x640_40k_3x8_city.py", Workdir(root))
    assert got is not None and got.value == 9_700_000 and got.where == "README.md:4"


def test_a_row_of_another_model_or_a_tunable_column_is_not_the_size(tmp_path: Path) -> None:
    root = _repo(tmp_path, "# Reef\n\nModel | Params | mIoU\n--- | --- | ---\nOtherNet-S_512_20k | 5.0 | 40\n")
    assert readme_params("cfgs/reef/reef_small_640x640_40k_3x8_city.py", Workdir(root)) is None
    tunable = "Model | Tunable Params | mIoU\n--- | --- | ---\nReefNet-L_640x640_3x8_40k_city | 1.1 | 66\n"
    (root / "cfgs/reef/README.md").write_text(tunable)
    assert readme_params("cfgs/reef/reef_large_640x640_40k_3x8_city.py", Workdir(root)) is None


def test_the_row_sharing_most_name_parts_wins_and_a_tie_between_sizes_gives_nothing(tmp_path: Path) -> None:
    readme = "Model | Params\n--- | ---\nReefNet_640x640_40k_3x8 | 2.3\nReefNet_640x640_40k_3x8_city | 9.7\n"
    root = _repo(tmp_path, readme)
    got = readme_params("cfgs/reef/reef_small_640x640_40k_3x8_city.py", Workdir(root))
    assert got is not None and got.value == 9_700_000 and got.where == "README.md:4"
    (root / "README.md").write_text("Model | Params\n--- | ---\nReef-S 640x640 40k | 2.3\nReef-S 640x640 40k (v2) | 2.9\n")
    assert readme_params("cfgs/reef/reef_small_640x640_40k_3x8_city.py", Workdir(root)) is None


def test_name_parts_join_neighbours_and_read_size_letters() -> None:
    assert {"resnet", "50", "resnet50"} <= tokens("ResNet-50")
    assert {"net", "b", "base", "512x512", "4x8"} <= tokens("Net-B_512x512_4x8")


def test_the_readme_nearest_the_config_decides_over_a_backbone_table_further_up(tmp_path: Path) -> None:
    root = _repo(tmp_path, "# Reef backbones\n\n| Model | #Params (M) |\n| --- | --- |\n| Reef-Small 640x640 | 2.1 |\n")
    (root / "cfgs/reef/README.md").write_text(NAMED_ROWS)
    got = readme_params("cfgs/reef/reef_small_640x640_40k_3x8_city.py", Workdir(root))
    assert got is not None and got.value == 2_300_000 and got.where.startswith("cfgs/reef/README.md:")


def test_a_nas_supernet_config_takes_no_size_from_the_tables_subnet_rows(tmp_path):
    root = tmp_path
    (root / "configs" / "nas").mkdir(parents=True)
    (root / "configs" / "nas" / "kite_supernet_16xb64_in1k.py").write_text("model = dict(type='KiteSearch')\n")
    (root / "configs" / "nas" / "README.md").write_text(
        "| Model | Params(M) | Config |\n|---|---|---|\n"
        "| kite supernet subnet-small 16xb64 in1k | 21.3 | [config](kite_supernet_16xb64_in1k.py) |\n")
    wd = Workdir(root)
    assert params_fact(["configs/nas/kite_supernet_16xb64_in1k.py"],
                       ["configs/nas/kite_supernet_16xb64_in1k.py"], wd) is None
