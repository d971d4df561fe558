"""A job that relaunches itself once per visible GPU from a helper module (`if cfg.ddp and cfg.rank is None:
start_workers(cfg)`, the helper looping `subprocess.Popen([sys.executable] + argv)` over
`torch.cuda.device_count()`), and splits its configured batch in place (`cfg.batch_size //= world_size`):
the GPU count is set at submission and the configured batch is the total."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

CONFIG = """
    defaults:
      - data: small
    batch_size: 24
    epochs: 80
    ddp: false
    rank:
    world_size:
"""

WORKERS = """
    import subprocess as proc
    import sys

    def start_workers(cfg):
        import torch
        world_size = torch.cuda.device_count()
        for rank in range(world_size):
            argv = list(sys.argv) + [f"world_size={world_size}", f"rank={rank}"]
            proc.Popen([sys.executable] + argv)
"""

DIST = """
    world_size = 1
    rank = 0

    def init(cfg):
        global world_size, rank
        if cfg.ddp:
            world_size = cfg.world_size
            rank = cfg.rank
"""

TRAIN = """
    import hydra
    import torch
    from echo import dist
    from echo.workers import start_workers

    def run(cfg):
        dist.init(cfg)
        cfg.batch_size //= dist.world_size
        loader = torch.utils.data.DataLoader(make_set(cfg), batch_size=cfg.batch_size, shuffle=True)
        model = build().cuda()
        for epoch in range(cfg.epochs):
            fit_one(model, loader)

    @hydra.main(config_path="conf/config.yaml")
    def main(cfg):
        if cfg.ddp and cfg.rank is None:
            start_workers(cfg)
        else:
            run(cfg)

    if __name__ == "__main__":
        main()
"""


def _job(tmp_path):
    return make_job(tmp_path, {"conf/config.yaml": CONFIG, "conf/data/small.yaml": "data:\n  root: x\n",
                               "echo/__init__.py": "", "echo/workers.py": WORKERS, "echo/dist.py": DIST,
                               "train.py": TRAIN})


def value(facts: dict, field: str) -> object:
    return facts[field].value if field in facts else None


def test_a_relaunch_per_visible_gpu_from_a_helper_leaves_the_gpus_open_and_the_batch_total(tmp_path):
    f = analyze_code(_job(tmp_path), "python train.py ddp=1 epochs=40", use_llm=False).facts
    assert value(f, "num_gpus") is None
    assert value(f, "global_batch_size") == 24
    assert value(f, "micro_batch_size") is None  # 24 over as many processes as GPUs
    assert value(f, "epochs") == 40


def test_the_same_job_with_its_relaunch_switched_off_runs_one_process(tmp_path):
    f = analyze_code(_job(tmp_path), "python train.py", use_llm=False).facts
    assert value(f, "num_gpus") == 1
    assert value(f, "micro_batch_size") == 24 and value(f, "global_batch_size") == 24
