"""A documented multi-node command writes the node rank as a set of alternatives (`--node_rank {0, 1, 2, 3}`);
bash splits it into words, but it is one value and the launcher's options after it still count."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.launch.model import option_value
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import argparse

p = argparse.ArgumentParser()
p.add_argument("--batch_size", type=int, default=8)
args = p.parse_args()
"""


@pytest.mark.parametrize("rank", ["{0, 1, 2}", "{0,1,2}", "$NODE_RANK"])
def test_the_processes_per_node_after_a_rank_set_are_read(tmp_path: Path, rank: str) -> None:
    make_job(tmp_path, {"train.py": TRAIN})
    cmd = f"python -m torch.distributed.launch --nnodes 3 --node_rank {rank} --nproc_per_node=4 train.py --batch_size 2"
    prof = analyze_code(tmp_path, command=cmd, use_llm=False)
    assert prof.value("num_gpus") == 12
    assert prof.value("global_batch_size") == 24


def test_an_unclosed_brace_is_an_ordinary_value() -> None:
    assert option_value(["{a,", "b", "train.py"], 0) == ("{a,", 1)
    assert option_value(["{0,", "1,", "2}", "train.py"], 0) == ("{0, 1, 2}", 3)
