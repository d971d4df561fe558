"""A data module with one helper per split (`def make_train_loader(args)` splitting the total batch over the
ranks, `def make_val_loader(args)` with `batch_size=1`): the evaluation helper's loader is never taken for the
per-GPU training batch, which is the total over the process count."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.eval_helpers import evaluation_helper

from .codeprof_support import make_job

LOADERS = """
    import torch
    import torch.distributed as dist


    def make_train_loader(args, dataset):
        world = dist.get_world_size() if dist.is_initialized() else 1
        per_rank = args.total_batch // world
        return torch.utils.data.DataLoader(dataset, batch_size=per_rank, drop_last=True)


    def make_val_loader(args, dataset):
        return torch.utils.data.DataLoader(dataset, batch_size=1)
"""

MAIN = """
    import argparse
    import torch
    import torch.distributed as dist
    import loaders

    p = argparse.ArgumentParser()
    p.add_argument("--total_batch", type=int, default=96)
    p.add_argument("--iterations", type=int, default=7000)
    args = p.parse_args()
    dist.init_process_group("nccl")
    data = list(range(1000))
    val = loaders.make_val_loader(args, data)
    train = loaders.make_train_loader(args, data)
    model = torch.nn.Linear(4, 4).cuda()
    for step, batch in zip(range(args.iterations), train):
        model(batch).sum().backward()
"""


def test_the_val_helpers_batch_of_one_is_not_the_training_micro_batch(tmp_path):
    root = make_job(tmp_path, {"loaders.py": LOADERS, "main.py": MAIN})
    facts = analyze_code(root, "torchrun --nproc_per_node=4 main.py --total_batch 128", use_llm=False).facts
    assert facts["global_batch_size"].value == 128
    assert facts["micro_batch_size"].value == 32


def test_helpers_named_for_evaluation_only_are_told_from_training_ones():
    assert evaluation_helper("make_val_loader")
    assert evaluation_helper("buildTestDataloader")
    assert not evaluation_helper("get_train_val_loaders")
    assert not evaluation_helper("make_train_loader")
    assert not evaluation_helper(None)
