"""Slurm's GPU requests other than per node: `--gpus=N` on one node is that node's GPUs, and
`--gpus-per-task=K` with `--ntasks-per-node=T` gives K x T per node (one torchrun per node under srun), as
`$SLURM_GPUS_ON_NODE` then says."""

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
loader = DataLoader(range(40), batch_size=3)
"""


@pytest.mark.parametrize(("header", "nodes", "gpus"), [
    ("#SBATCH --nodes=1\n#SBATCH --gpus=6\n", 1, 6),
    ("#SBATCH -N 1\n#SBATCH -G 2\n", 1, 2),
    ("#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-task=4\nsrun ", 3, 12),
])
def test_gpus_requested_per_job_or_per_task_reach_the_per_node_count(tmp_path: Path, header: str, nodes: int,
                                                                     gpus: int):
    script = ("#!/bin/bash\n" + header + f"torchrun --nnodes {nodes} --nproc_per_node $SLURM_GPUS_ON_NODE "
              "fit_ddp.py\n")
    wd = make_job(tmp_path, {"fit_ddp.py": ENTRY, "job.sbatch": script})
    f = analyze_code(wd, "sbatch job.sbatch", use_llm=False).facts
    assert f["num_gpus"].value == gpus and f["global_batch_size"].value == 3 * gpus


def test_a_job_wide_gpu_count_over_several_nodes_leaves_the_per_node_count_open(tmp_path: Path):
    script = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus=6\ntorchrun --nnodes 2 --nproc_per_node $SLURM_GPUS_ON_NODE fit_ddp.py\n"
    wd = make_job(tmp_path, {"fit_ddp.py": ENTRY, "job.sbatch": script})
    assert analyze_code(wd, "sbatch job.sbatch", use_llm=False).facts.get("num_gpus") is None
