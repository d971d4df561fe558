"""A bare `python -m pkg.train` is one process only when none of the job's own code it runs starts one worker
per GPU: a function the entry calls that forks (or spawns) in a loop over the GPU count makes the process
count the visible GPUs, decided at run time, so `num_gpus` stays open. The launcher is found in a module
the entry imports even when that module is past the file budget."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code, static_profile
from tests.codeprof.codeprof_support import make_job

LAUNCHER = """
    import os

    import torch


    def count_gpus():
        return torch.cuda.device_count()


    def start_workers(args):
        args.n_gpu = count_gpus()
        children = []
        if args.n_gpu > 1:
            for rank in range(COUNT):
                args.local_rank = rank
                pid = os.fork()
                if pid > 0:
                    children.append(pid)
                else:
                    break
        torch.cuda.set_device(args.local_rank)
        return children
"""

TRAIN = """
    import argparse

    import torch

    IMPORTS
    from .workers import start_workers

    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=48)
    p.add_argument("--num_workers", type=int, default=4)
    args = p.parse_args()


    def main():
        start_workers(args)
        net = torch.nn.Linear(16, 4).cuda()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(2000):
            loss = net(torch.randn(args.batch, 16).cuda()).sum()
            loss.backward()
            opt.step()


    if __name__ == "__main__":
        main()
"""


def _job(tmp_path, count: str, helpers: int = 0):
    tree = {
        "lab/__init__.py": "",
        "lab/run/__init__.py": "",
        "lab/run/workers.py": LAUNCHER.replace("COUNT", count),
    }
    for k in range(helpers):  # modules the entry imports before the launcher (in reading order): they fill the file budget
        tree[f"lab/run/helper{k:02d}.py"] = f"SCALE_{k} = {k}\n"
    imports = "\n    ".join(f"from .helper{k:02d} import SCALE_{k}" for k in range(helpers))
    tree["lab/run/train.py"] = TRAIN.replace("IMPORTS", imports)
    make_job(tmp_path, tree)
    return analyze_code(tmp_path, "python -m lab.run.train", use_llm=False)


def test_a_fork_per_gpu_in_a_function_the_entry_calls_leaves_the_gpu_count_open(tmp_path):
    res = _job(tmp_path, "args.n_gpu")
    assert res.value("micro_batch_size") == 48
    assert res.value("num_gpus") is None


def test_the_per_gpu_launcher_past_the_file_budget_still_leaves_the_gpu_count_open(tmp_path):
    res = _job(tmp_path, "args.n_gpu", helpers=20)
    assert res.value("micro_batch_size") == 48
    static, _ = static_profile(tmp_path, "python -m lab.run.train")
    assert "lab/run/workers.py" not in static.py  # the budget ran out before the launcher
    assert res.value("num_gpus") is None


def test_a_fork_per_data_worker_keeps_the_one_process_of_python_m(tmp_path):
    res = _job(tmp_path, "args.num_workers")
    assert res.value("num_gpus") == 1


SPAWNING_LAUNCHER = """
    import torch.multiprocessing as mp


    def start_workers(args, num_gpus=1):
        if num_gpus > 1:
            mp.spawn(worker, args=(args,), nprocs=num_gpus, join=True)


    def worker(rank, args):
        pass
"""


def test_a_spawn_over_a_gpu_count_the_caller_passes_is_not_a_run_time_count(tmp_path):
    make_job(tmp_path, {
        "lab/__init__.py": "",
        "lab/run/__init__.py": "",
        "lab/run/workers.py": SPAWNING_LAUNCHER,
        "lab/run/train.py": TRAIN.replace("IMPORTS", "").replace("start_workers(args)",
                                                                "start_workers(args, num_gpus=1)"),
    })
    res = analyze_code(tmp_path, "python -m lab.run.train", use_llm=False)
    assert res.value("num_gpus") == 1
