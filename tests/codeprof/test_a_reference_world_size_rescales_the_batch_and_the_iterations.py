"""A job that calls `auto_scale_workers` with a reference world size other than its GPU count runs a rescaled
config: total batch x (GPUs / reference), iterations / (GPUs / reference); with the GPU count open both stay
null. Without the call, or with the reference equal to the GPU count, the config's values stand."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import argparse


def auto_scale_workers(cfg, world):
    return cfg


def main(args):
    cfg = load(args.cfg)
    cfg.SOLVER.REFERENCE_WORLD_SIZE = args.ref
    cfg = auto_scale_workers(cfg, args.ngpu)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--cfg", default="cfg.yaml")
    p.add_argument("--ref", type=int, default=0)
    p.add_argument("--ngpu", type=int, default=1)
    p.add_argument("opts", nargs=argparse.REMAINDER)
    main(p.parse_args())
"""

CFG = """
SOLVER:
  IMS_PER_BATCH: 32
  MAX_ITER: 9000
  REFERENCE_WORLD_SIZE: 0
"""


@pytest.mark.parametrize(("launch", "want"), [
    ("torchrun --nproc_per_node=4 train.py --ref 16", (8, 36000, 2)),
    ("torchrun --nproc_per_node=4 train.py --ref 4", (32, 9000, 8)),
    ("torchrun --nproc_per_node=4 train.py", (32, 9000, 8)),
])
def test_the_batch_and_the_iterations_follow_the_reference(tmp_path: Path, launch: str, want: tuple) -> None:
    make_job(tmp_path, {"train.py": TRAIN, "cfg.yaml": CFG})
    prof = analyze_code(tmp_path, command=launch, use_llm=False)
    got = (prof.value("global_batch_size"), prof.value("train_steps"), prof.value("micro_batch_size"))
    assert got == want
