"""A job started as one process that spawns one worker per GPU, with the spawn count taken from a distributed-setup
helper's world size, runs on the GPUs the submitter makes visible (codeprof/static/devices.py `_spawn_count`)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

_CONFIG = """world_size: 1
shard_batch: 3
rounds: 40
"""

# `meshkit` is a helper package the job imports but does not ship: its `setup_dist_world` is not in the sources
_SCRIPT = '''import argparse
import yaml
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler
from meshkit import setup_dist_world


class Box(dict):
    __getattr__ = dict.get
    __setattr__ = dict.__setitem__


def worker(rank, cfg):
    torch.distributed.init_process_group("nccl", rank=rank, world_size=cfg.world_size)
    data = list(range(100))
    loader = DataLoader(data, batch_size=cfg.shard_batch, sampler=DistributedSampler(data))
    net = torch.nn.Linear(4, 4).cuda(rank)
    for rnd in range(cfg.rounds):
        for item in loader:
            pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", required=True)
    args = parser.parse_args()
    cfg = Box(yaml.safe_load(open(args.cfg)))
    cfg.rank, cfg.world_size, cfg.spread = setup_dist_world(cfg)
    if cfg.spread:
        mp.spawn(worker, nprocs=cfg.world_size, args=(cfg,))
    else:
        worker(0, cfg)
'''


def _job(tmp_path: Path) -> Path:
    (tmp_path / "cfgs").mkdir()
    (tmp_path / "cfgs" / "base.yaml").write_text(_CONFIG)
    (tmp_path / "fit.py").write_text(_SCRIPT)
    return tmp_path


def test_a_spawn_over_the_helpers_world_size_uses_every_gpu_the_submitter_makes_visible(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path), "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5 python fit.py --cfg cfgs/base.yaml",
                        use_llm=False)
    assert prof.facts["num_gpus"].value == 6  # not the config's world_size: 1, which the helper replaces
    assert prof.facts["micro_batch_size"].value == 3
    assert prof.facts["global_batch_size"].value == 18


def test_without_visible_devices_the_spawned_count_is_left_to_submission(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path), "python fit.py --cfg cfgs/base.yaml", use_llm=False)
    got = prof.facts.get("num_gpus")
    assert got is None or got.value is None  # no wrong 1 from the launcher's single process


def test_a_spawn_count_the_config_states_outright_is_still_read(tmp_path: Path) -> None:
    job = _job(tmp_path)
    (job / "fit.py").write_text(_SCRIPT.replace("nprocs=cfg.world_size", "nprocs=cfg.procs"))
    (job / "cfgs" / "base.yaml").write_text(_CONFIG + "procs: 4\n")
    prof = analyze_code(job, "python fit.py --cfg cfgs/base.yaml", use_llm=False)
    assert prof.facts["num_gpus"].value == 4
