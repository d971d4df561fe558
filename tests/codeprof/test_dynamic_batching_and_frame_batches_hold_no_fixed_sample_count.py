"""`dynamic_batching: true` packs the update micro-batches by tokens (the global batch stands), and a batch whose
`batch_size_type` is `frame` counts frames: the batch fields they make variable stay null, and derivation does not
fill them again."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import argparse

import yaml

p = argparse.ArgumentParser()
p.add_argument("--config")
args = p.parse_args()
cfg = yaml.safe_load(open(args.config))
"""


@pytest.mark.parametrize(("extra", "want"), [
    ("  dynamic_batching: true\n", (None, 64)),
    ("  dynamic_batching: false\n", (8, 64)),
    ("  batch_size_type: frame\n", (None, None)),
])
def test_the_batch_fields(tmp_path: Path, extra: str, want: tuple) -> None:
    cfg = "trainer:\n  n_gpus: 8\nworker:\n  global_batch_size: 64\n  batch_size: 8\n" + extra
    make_job(tmp_path, {"train.py": TRAIN, "cfg.yaml": cfg})
    prof = analyze_code(tmp_path, command="torchrun --nproc_per_node=8 train.py --config cfg.yaml", use_llm=False)
    assert (prof.value("micro_batch_size"), prof.value("global_batch_size")) == want


def test_a_global_batch_derived_from_a_dynamically_packed_batch_is_left_open_too(tmp_path: Path) -> None:
    cfg = "batch_size: 32\ngrad_accumulation_factor: 1\ndynamic_batching: true\nmax_batch_length_train: 600\n"
    make_job(tmp_path, {"train.py": TRAIN, "cfg.yaml": cfg})
    prof = analyze_code(tmp_path, command="python train.py --config cfg.yaml", use_llm=False)
    assert (prof.value("micro_batch_size"), prof.value("global_batch_size")) == (None, None)
