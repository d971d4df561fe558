"""The entry script's `AlgoConfig(batch_size=32)` is the run's batch, over the shared default a library's base
config dataclass declares (`batch_size: int = 256`); a batch given on the command line still wins."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

BASE = """
import dataclasses


@dataclasses.dataclass()
class SharedConfig:
    batch_size: int = 256
    gamma: float = 0.99
"""

ENTRY = """
import argparse

import agents


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    algo = agents.algos.QConfig(
        batch_size=BATCH,
        learning_rate=1e-3,
    ).create(device=a.device)
    algo.fit(dataset, n_steps=1000)


if __name__ == "__main__":
    main()
"""


def _job(tmp_path: Path, batch: str) -> Path:
    return make_job(tmp_path, {"agents/__init__.py": "from .base import SharedConfig\n",
                               "agents/base.py": BASE, "train.py": ENTRY.replace("BATCH", batch)})


def test_the_keyword_replaces_the_base_default(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path, "32"), command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 32


def test_a_keyword_the_analyzer_cannot_evaluate_leaves_the_reading_as_it_was(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path, "compute_batch()"), command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 256
