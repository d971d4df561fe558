"""HugeCTR's `CreateSolver(batchsize=N, vvgpu=[[...], [...]])`: N is the global batch and the GPUs are every
entry of every node's list, whatever process count mpirun starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

JOB = """
import hugectr

solver = hugectr.CreateSolver(
    max_eval_batches=10,
    batchsize_eval=4096,
    batchsize=4096,
    lr=0.001,
    vvgpu=VVGPU,
    repeat_dataset=True,
)
model = hugectr.Model(solver, reader, optimizer)
model.fit(max_iter=500, display=50)
"""


@pytest.mark.parametrize(("vvgpu", "launch", "want"), [
    ("[[0, 1, 2, 3], [0, 1, 2, 3]]", "mpirun -np 2 python3 job.py", (8, 4096, 512)),
    ("[[0, 1]]", "python3 job.py", (2, 4096, 2048)),
    ("[[0]]", "python3 job.py", (1, 4096, 4096)),
])
def test_gpus_and_batches_follow_the_solver(tmp_path: Path, vvgpu: str, launch: str, want: tuple) -> None:
    make_job(tmp_path, {"job.py": JOB.replace("VVGPU", vvgpu)})
    prof = analyze_code(tmp_path, command=launch, use_llm=False)
    assert (prof.value("num_gpus"), prof.value("global_batch_size"), prof.value("micro_batch_size")) == want
