"""One process that splits each batch over `torch.cuda.device_count()` GPUs itself uses every visible GPU:
its GPU count is left to the submission (null with a note), never 1."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TRAIN = """
    import torch

    def fit(batch_size=24):
        net = torch.nn.Linear(4, 4).cuda()
        if batch_size % torch.cuda.device_count() != 0:
            raise ValueError("the batch must split evenly over the GPUs")
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(1000):
            x = torch.randn(batch_size, 4).cuda()
            out = torch.nn.parallel.data_parallel(net, x) if torch.cuda.device_count() > 1 else net(x)
            opt.zero_grad()
            out.sum().backward()
            opt.step()

    if __name__ == "__main__":
        fit()
"""

SPAWNED = """
    import torch
    import torch.multiprocessing as mp

    def worker(rank, world, batch_size):
        torch.distributed.init_process_group("nccl", rank=rank, world_size=world)
        per_gpu = batch_size // torch.cuda.device_count()

    if __name__ == "__main__":
        n = torch.cuda.device_count()
        mp.spawn(worker, args=(n, 64), nprocs=n)
"""


def test_a_batch_divided_by_the_visible_gpu_count_leaves_the_count_to_the_submission(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.facts.get("num_gpus") is None or res.facts["num_gpus"].value is None
    assert any("every visible GPU" in n for n in res.warnings)


def test_the_same_division_without_the_functional_split_is_still_every_visible_gpu(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("torch.nn.parallel.data_parallel(net, x) if "
                                                  "torch.cuda.device_count() > 1 else net(x)", "net(x)")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.facts.get("num_gpus") is None or res.facts["num_gpus"].value is None


def test_a_plain_one_gpu_job_stays_one_gpu(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("batch_size % torch.cuda.device_count() != 0", "batch_size < 1")
                        .replace("torch.nn.parallel.data_parallel(net, x) if torch.cuda.device_count() > 1 "
                                 "else net(x)", "net(x)")})
    assert analyze_code(tmp_path, "python train.py", use_llm=False).facts["num_gpus"].value == 1


def test_spawned_processes_that_divide_their_share_are_not_read_as_one_process(tmp_path):
    make_job(tmp_path, {"train.py": SPAWNED})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert not any("splits each batch over every visible GPU" in n for n in res.warnings)
