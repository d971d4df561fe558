"""TorchX's built-in components: `dist.ddp -j NODESxPROCS` starts that many processes, `utils.python` one,
an elastic `-j MIN:MAXxPROCS` leaves the node count open, and the project's own component says nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

FIT = """\
import argparse
import torch
from torch.utils.data import DataLoader

p = argparse.ArgumentParser()
p.add_argument("--per-rank", type=int, default=5)
args = p.parse_args()
torch.distributed.init_process_group("nccl")
net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 3).cuda())
loader = DataLoader(range(60), batch_size=args.per_rank)
"""


@pytest.mark.parametrize(("command", "gpus", "micro"), [
    ("torchx run -s local_cwd dist.ddp -j 3x2 --script jobs/fit.py", 6, 5),
    ("torchx run dist.ddp -j 4 --script jobs/fit.py -- --per-rank 7", 4, 7),
    ("torchx run --scheduler slurm dist.spmd -j 2x8 -m jobs.fit --per-rank 2", 16, 2),
    ("torchx run utils.python --script jobs/fit.py --per-rank 9", 1, 9),
])
def test_a_torchx_component_sets_the_processes_it_documents(tmp_path: Path, command: str, gpus: int, micro: int):
    wd = make_job(tmp_path, {"jobs/__init__.py": "", "jobs/fit.py": FIT})
    p = analyze_code(wd, command, use_llm=False)
    assert p.extras["entry_script"] == "jobs/fit.py"
    assert p.facts["num_gpus"].value == gpus
    assert p.facts["micro_batch_size"].value == micro and p.facts["global_batch_size"].value == micro * gpus


@pytest.mark.parametrize("command", ["torchx run dist.ddp -j 1:4x8 --script jobs/fit.py",
                                     "torchx run jobs/components.py:trainer --script jobs/fit.py"])
def test_an_elastic_or_custom_torchx_launch_leaves_the_gpu_count_open(tmp_path: Path, command: str):
    wd = make_job(tmp_path, {"jobs/__init__.py": "", "jobs/fit.py": FIT})
    f = analyze_code(wd, command, use_llm=False).facts
    assert f.get("num_gpus") is None and f.get("global_batch_size") is None
