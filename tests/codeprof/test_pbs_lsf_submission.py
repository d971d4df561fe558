"""Batch systems other than Slurm: `qsub [options] job.pbs` (PBS/Torque) and `bsub < job.lsf` or
`bsub [options] job.lsf` (LSF) run the job script once; the launcher inside it starts the processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

ENTRY = """\
import torch
from torch.utils.data import DataLoader

torch.distributed.init_process_group("nccl")
net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
loader = DataLoader(range(50), batch_size=7)
"""

PBS = """\
#!/bin/bash
#PBS -N sweep
#PBS -l select=2:ngpus=4:mpiprocs=4
cd $PBS_O_WORKDIR
mpirun -np 8 python pipeline/run_ddp.py
"""

LSF = """\
#!/bin/bash
#BSUB -n 3
#BSUB -gpu "num=3"
torchrun --nproc_per_node 3 pipeline/run_ddp.py
"""


@pytest.mark.parametrize(("command", "gpus"), [
    ("qsub jobs/sweep.pbs", 8),
    ("qsub -q gpuq -l walltime=02:00:00 -N sweep jobs/sweep.pbs", 8),
    ("bsub < jobs/three.lsf", 3),
    ("bsub -q normal -J three jobs/three.lsf", 3),
])
def test_a_submitted_job_script_is_read_like_the_script_it_runs(tmp_path: Path, command: str, gpus: int):
    wd = make_job(tmp_path, {"pipeline/run_ddp.py": ENTRY, "jobs/sweep.pbs": PBS, "jobs/three.lsf": LSF})
    p = analyze_code(wd, command, use_llm=False)
    assert p.extras["entry_script"] == "pipeline/run_ddp.py"
    assert p.facts["num_gpus"].value == gpus and p.facts["global_batch_size"].value == 7 * gpus
