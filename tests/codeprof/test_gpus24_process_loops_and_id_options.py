"""Processes started in a loop count GPUs only when they use the GPU (CPU actors beside one learner do not), and
counted by the loop around the `Process(...)` call; a DataParallel over the ids of the program's `--gpus` option."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

ACTORS = """
    import argparse
    import torch
    import torch.multiprocessing as mp

    parser = argparse.ArgumentParser()
    parser.add_argument("--n_rollers", type=int, default=12)
    parser.add_argument("--n_slots", type=int, default=40)
    parser.add_argument("--steps", type=int, default=100000)

    def roll(worker_id, slots):
        env_state = [0] * 8
        for t in range(64):
            env_state[t % 8] += 1

    def learn(opts):
        device = torch.device("cuda")
        slots = []
        for _ in range(opts.n_slots):
            slots.append(torch.zeros(64).share_memory_())
        procs = []
        for i in range(opts.n_rollers):
            p = mp.Process(target=roll, args=(i, slots))
            p.start()
            procs.append(p)
        net = torch.nn.Linear(8, 4).to(device)
        for step in range(opts.steps):
            net(torch.zeros(2, 8, device=device)).sum().backward()

    if __name__ == "__main__":
        learn(parser.parse_args())
"""


def test_cpu_actor_processes_beside_one_learner_are_not_a_gpu_count(tmp_path):
    make_job(tmp_path, {"learn.py": ACTORS})
    res = analyze_code(tmp_path, "python learn.py --n_rollers 30", use_llm=False)
    assert res.facts["num_gpus"].value == 1


def test_gpu_worker_processes_are_counted_by_the_loop_around_their_start(tmp_path):
    gpu_roll = ACTORS.replace("env_state = [0] * 8", "torch.cuda.set_device(worker_id); env_state = [0] * 8")
    make_job(tmp_path, {"learn.py": gpu_roll})
    res = analyze_code(tmp_path, "python learn.py --n_rollers 3", use_llm=False)
    assert res.facts["num_gpus"].value == 3


SEG = """
    import argparse
    import torch

    def split_ids(text):
        out = []
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            out += list(range(int(lo), int(hi or lo) + 1))
        return out

    def main(opts, gpus):
        net = torch.nn.Conv2d(3, 8, 3).cuda()
        if len(gpus) > 1:
            net = torch.nn.DataParallel(net, device_ids=gpus)
        for epoch in range(opts.epochs):
            net(torch.zeros(len(gpus), 3, 32, 32).cuda()).mean().backward()

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpus", default="0-5", help="ids, e.g. 0-3 or 0,1,2,3")
        parser.add_argument("--epochs", type=int, default=30)
        opts = parser.parse_args()
        main(opts, split_ids(opts.gpus))
"""


def test_data_parallel_over_the_default_id_range_of_the_gpus_option_counts_its_ids(tmp_path):
    make_job(tmp_path, {"seg.py": SEG})
    assert analyze_code(tmp_path, "python seg.py --epochs 3", use_llm=False).facts["num_gpus"].value == 6


def test_the_id_list_given_on_the_command_line_wins(tmp_path):
    make_job(tmp_path, {"seg.py": SEG})
    assert analyze_code(tmp_path, "python seg.py --gpus 0,1", use_llm=False).facts["num_gpus"].value == 2


def test_a_lone_default_id_is_not_read_as_a_list(tmp_path):
    make_job(tmp_path, {"seg.py": SEG.replace('default="0-5"', 'default="3"')})
    res = analyze_code(tmp_path, "python seg.py", use_llm=False)
    assert res.facts.get("num_gpus") is None or res.facts["num_gpus"].value != 3
