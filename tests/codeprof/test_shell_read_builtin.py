"""The shell's `read` with a here-string (`IFS=, read -ra GPUS <<< "$CUDA_VISIBLE_DEVICES"`): the fields land
in the named variables or array; input the analyzer cannot see makes them unknown, never empty or one."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

ENTRY = """\
import torch
torch.distributed.init_process_group("nccl")
net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
"""


@pytest.mark.parametrize(("script", "gpus"), [
    (('export CUDA_VISIBLE_DEVICES=4,5,6\nIFS=\',\' read -ra DEVS <<< "$CUDA_VISIBLE_DEVICES"\n'
      'torchrun --nproc_per_node=${#DEVS[@]} worker.py\n'), 3),
    ('read -r HOSTS EACH <<< "3 2"\ntorchrun --nnodes $HOSTS --nproc_per_node $EACH worker.py\n', 6),
    (('LIST="${CUDA_VISIBLE_DEVICES:-0,1,2,3,4}"\nIFS=, read -r -a IDS <<< "$LIST"\n'
      'torchrun --nproc_per_node ${#IDS[@]} worker.py\n'), 5),
])
def test_a_here_string_read_fills_the_variables_the_launch_uses(tmp_path: Path, script: str, gpus: int):
    wd = make_job(tmp_path, {"worker.py": ENTRY, "go.sh": script})
    assert analyze_code(wd, "bash go.sh", use_llm=False).facts["num_gpus"].value == gpus


@pytest.mark.parametrize("script", [
    'IFS=\',\' read -ra DEVS <<< "$SOME_LIST"\ntorchrun --nproc_per_node=${#DEVS[@]} worker.py\n',
    'read -r EACH < gpus.txt\ntorchrun --nproc_per_node=$EACH worker.py\n',
])
def test_a_read_from_input_the_sources_leave_open_leaves_the_count_open(tmp_path: Path, script: str):
    wd = make_job(tmp_path, {"worker.py": ENTRY, "go.sh": script})
    assert analyze_code(wd, "bash go.sh", use_llm=False).facts.get("num_gpus") is None
