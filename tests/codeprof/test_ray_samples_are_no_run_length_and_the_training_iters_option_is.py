"""A `--max_steps` documented as the samples along each ray is a renderer's inner count; the run length is the
option documented as the training iterations."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

MAIN = """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--text", default="")
parser.add_argument("--iters", type=int, default=4000, help="training iters")
parser.add_argument("--max_steps", type=int, default=512, help="max num steps sampled per ray")
parser.add_argument("--batch_size", type=int, default=1)
opt = parser.parse_args()
"""


def test_the_training_iters_are_the_steps(tmp_path: Path) -> None:
    make_job(tmp_path, {"main.py": MAIN})
    assert analyze_code(tmp_path, command="python main.py --text x", use_llm=False).value("train_steps") == 4000
    assert analyze_code(tmp_path, command="python main.py --iters 900", use_llm=False).value("train_steps") == 900
