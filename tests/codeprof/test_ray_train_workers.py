"""Ray Train jobs: `ScalingConfig(num_workers=N, use_gpu=True)` is N one-GPU worker processes, whether the
script runs directly or through `ray job submit -- ...`; CPU workers or multi-GPU workers decide nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

RAY_JOB = """\
import torch
from ray.train import ScalingConfig
from ray.train.torch import TorchTrainer

WORKERS = 6


def per_worker(config):
    net = torch.nn.Linear(2, 2)


trainer = TorchTrainer(per_worker, scaling_config=ScalingConfig(num_workers=WORKERS, use_gpu={gpu}{extra}))
trainer.fit()
"""


@pytest.mark.parametrize("command", ["python tune_it.py",
                                     "ray job submit --address http://head:8265 --working-dir . -- python tune_it.py"])
def test_ray_train_workers_with_a_gpu_each_are_the_gpu_count(tmp_path: Path, command: str):
    wd = make_job(tmp_path, {"tune_it.py": RAY_JOB.format(gpu="True", extra="")})
    f = analyze_code(wd, command, use_llm=False).facts
    assert f["num_gpus"].value == 6


@pytest.mark.parametrize(("gpu", "extra"), [("False", ""), ("True", ', resources_per_worker={"GPU": 2}')])
def test_cpu_workers_or_workers_of_several_gpus_do_not_count_as_one_gpu_each(tmp_path: Path, gpu: str, extra: str):
    wd = make_job(tmp_path, {"tune_it.py": RAY_JOB.format(gpu=gpu, extra=extra)})
    f = analyze_code(wd, "python tune_it.py", use_llm=False).facts
    assert f.get("num_gpus") is None
