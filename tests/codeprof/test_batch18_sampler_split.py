"""A batch sampler wrapped in one that hands each rank its share of every batch (`ShardedBatches(batches,
rank=rank, world_size=world)`): the configured batch is the global batch, and the per-GPU batch is that over the
process count, null while the count is decided at run time."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

SAMPLERS = """
    from torch.utils.data import Sampler


    class ShardedBatches(Sampler):
        def __init__(self, batches, rank=0, world_size=1):
            self.batches, self.rank, self.world_size = batches, rank, world_size

        def __iter__(self):
            for b in self.batches:
                share = len(b) // self.world_size
                yield b[self.rank * share:(self.rank + 1) * share]
"""

TRAIN = """
    import argparse
    import os
    import torch
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler
    from samplers import ShardedBatches

    p = argparse.ArgumentParser()
    p.add_argument("--train_batch_size", type=int, default=32)
    p.add_argument("--eval_batch_size", type=int, default=8)
    p.add_argument("--epochs", type=int, default=2)
    args = p.parse_args()
    world_size = {world}
    rank = int(os.environ.get("RANK", "0"))
    data = list(range(4096))
    model = torch.nn.Linear(4, 4).cuda()
    for epoch in range(args.epochs):
        batches = BatchSampler(RandomSampler(data), args.train_batch_size, False)
        batches = ShardedBatches(batches, rank=rank, world_size=world_size)
        for batch in DataLoader(data, batch_sampler=batches):
            model(batch).sum().backward()
    checks = BatchSampler(SequentialSampler(data), args.eval_batch_size, False)
    checks = ShardedBatches(checks, rank=rank, world_size=world_size)
"""


SPAWNED = """
    import argparse
    import torch
    import torch.multiprocessing as mp
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler
    from samplers import ShardedBatches


    def worker(rank, world_size, args):
        torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)
        data = list(range(4096))
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda(rank), device_ids=[rank])
        for epoch in range(args.epochs):
            batches = BatchSampler(RandomSampler(data), args.train_batch_size, False)
            batches = ShardedBatches(batches, rank=rank, world_size=world_size)
            for batch in DataLoader(data, batch_sampler=batches):
                model(batch).sum().backward()


    if __name__ == "__main__":
        p = argparse.ArgumentParser()
        p.add_argument("--train_batch_size", type=int, default=32)
        p.add_argument("--epochs", type=int, default=2)
        args = p.parse_args()
        n = torch.cuda.device_count()
        mp.spawn(worker, nprocs=n, args=(n, args))
"""


def test_a_batch_split_by_a_rank_sampler_over_gpus_counted_at_run_time_is_global_with_the_share_open(tmp_path):
    make_job(tmp_path, {"samplers.py": SAMPLERS, "train.py": SPAWNED})
    res = analyze_code(tmp_path, "python train.py --train_batch_size 96", use_llm=False)
    assert res.value("global_batch_size") == 96
    assert res.value("micro_batch_size") is None


def test_a_batch_split_by_a_rank_sampler_over_a_launched_world_gives_each_gpu_its_share(tmp_path):
    make_job(tmp_path, {"samplers.py": SAMPLERS,
                        "train.py": TRAIN.format(world='int(os.environ.get("WORLD_SIZE", "1"))')})
    res = analyze_code(tmp_path, "torchrun --nproc_per_node 4 train.py --train_batch_size 96", use_llm=False)
    assert res.value("num_gpus") == 4
    assert res.value("global_batch_size") == 96
    assert res.value("micro_batch_size") == 24
