"""The entry script sizes its model from a config object it imports from its own package (a yacs-style defaults
module merged with the run's YAML): the interpreter reads `cfg.MODEL.<key>` from the values the static pass already
resolved for the job, and follows `from . import backbones` to a builder table (`backbones.__dict__[arch]`).
Fixtures are written for these tests; every expected count is worked out by hand."""

from __future__ import annotations

import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

DEFAULTS = """
from yacs.config import CfgNode as CN

_C = CN()
_C.MODEL = CN()
_C.MODEL.arch = "tiny"
_C.MODEL.width = 8
_C.MODEL.classes = 10
_C.TRAIN = CN()
_C.TRAIN.batch_size = 4
"""

BACKBONES = """
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, bias=False)
        self.bn = nn.BatchNorm2d(width)


def tiny(width=8):
    return Stem(width)


def wide(width=8):
    return Stem(2 * width)
"""

BUILDER = """
import torch.nn as nn
from . import backbones


class Classifier(nn.Module):
    def __init__(self, body, width, classes):
        super().__init__()
        self.body = body
        self.head = nn.Linear(width, classes)


def build_model(arch, width, classes):
    body = backbones.__dict__[arch](width=width)
    out = 2 * width if arch == "wide" else width
    return Classifier(body, out, classes)
"""

TRAIN = """
import argparse

from segkit.config import cfg
from segkit.models import build_model


def main():
    model = build_model(cfg.MODEL.arch.lower(), cfg.MODEL.WIDTH_KEY, cfg.MODEL.classes)
    model.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", default="configs/base.yaml")
    args = parser.parse_args()
    cfg.merge_from_file(args.cfg)
    main()
"""


def _job(tmp_path: Path, width_key: str = "width") -> Path:
    pkg = tmp_path / "segkit"
    (pkg / "config").mkdir(parents=True)
    (pkg / "models").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "config" / "__init__.py").write_text("from .defaults import _C as cfg\n")
    (pkg / "config" / "defaults.py").write_text(DEFAULTS)
    (pkg / "models" / "__init__.py").write_text("from .builder import build_model\n")
    (pkg / "models" / "builder.py").write_text(BUILDER)
    (pkg / "models" / "backbones.py").write_text(BACKBONES)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "wide32.yaml").write_text(textwrap.dedent("""
        MODEL:
          arch: "WIDE"
          width: 32
          classes: 100
    """))
    (tmp_path / "train.py").write_text(TRAIN.replace("WIDTH_KEY", width_key))
    return tmp_path


def test_a_model_sized_by_an_imported_yacs_config_is_counted_with_the_runs_yaml_values(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path), "python train.py --cfg configs/wide32.yaml", use_llm=False)
    # wide(32): Conv2d(3, 64, 3, bias=False) = 3*64*9 = 1728, BatchNorm2d(64) = 128; Linear(64, 100) = 6500
    assert prof.facts["params"].value == 1728 + 128 + 6500


def test_the_defaults_module_sizes_the_model_when_the_run_gives_no_yaml_of_its_own(tmp_path: Path) -> None:
    job = _job(tmp_path)
    (job / "configs" / "base.yaml").write_text("TRAIN:\n  batch_size: 8\n")
    prof = analyze_code(job, "python train.py", use_llm=False)
    # tiny(8): Conv2d(3, 8, 3, bias=False) = 216, BatchNorm2d(8) = 16; Linear(8, 10) = 90
    assert prof.facts["params"].value == 216 + 16 + 90


def test_a_config_key_no_config_file_holds_leaves_the_size_unknown(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path, "hidden_dim"), "python train.py --cfg configs/wide32.yaml", use_llm=False)
    assert prof.value("params") is None
