"""A configured batch divided by the GPU count (`torch.cuda.device_count()`) before the training loader is built:
the configured batch is the global one; the per-process batch is open when the GPU count is, and the split is
not applied when the run does not take the distributed branch."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

CONFIG = """
    data:
      root: /datasets/pairs
      batch_size: 96
      workers: 8
    train:
      epochs: 30
"""

TRAIN = """
    import argparse
    import torch
    from omegaconf import OmegaConf
    from torch.utils.data import DataLoader

    def worker(rank, conf, args):
        loader_conf = conf.data
        if args.multi_gpu:
            torch.distributed.init_process_group("nccl", rank=rank, world_size=args.gpu_total)
            loader_conf.batch_size = int(loader_conf.batch_size / args.gpu_total)
        loader = DataLoader(PairSet(loader_conf.root), batch_size=loader_conf.batch_size, shuffle=True)
        for epoch in range(conf.train.epochs):
            for batch in loader:
                step(batch)

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--conf", type=str)
        parser.add_argument("--multi_gpu", action="store_true")
        args = parser.parse_args()
        conf = OmegaConf.load(args.conf)
        if args.multi_gpu:
            args.gpu_total = torch.cuda.device_count()
            torch.multiprocessing.spawn(worker, nprocs=args.gpu_total, args=(conf, args))
        else:
            worker(0, conf, args)
"""


def test_a_batch_divided_by_the_visible_gpu_count_is_the_global_batch(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "conf/pairs.yaml": CONFIG})
    res = analyze_code(tmp_path, "python train.py --conf conf/pairs.yaml --multi_gpu", use_llm=False)
    assert res.facts["global_batch_size"].value == 96
    assert res.facts.get("micro_batch_size") is None or res.facts["micro_batch_size"].value is None


def test_the_same_job_without_the_distributed_flag_keeps_its_whole_batch(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "conf/pairs.yaml": CONFIG})
    res = analyze_code(tmp_path, "python train.py --conf conf/pairs.yaml", use_llm=False)
    assert res.facts["micro_batch_size"].value == 96
    assert res.facts["global_batch_size"].value == 96
