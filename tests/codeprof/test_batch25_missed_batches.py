"""Batch sizes the analyzer used to leave open: a plain process that replicates nothing is one replica; an EMA
decay named `accum` is no accumulation; an entry function's defaults its call leaves unset; rollout names of
gymnax-style configs; a stated `total_bs`; OneFlow's launcher; accumulation and global batch both None; a
rank-splitting batch sampler in a module past the file budget."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.called_defaults import ROLLOUT_LIKE, called_function_defaults

from .codeprof_support import make_job

PLAIN = """
    import argparse
    import torch
    {extra_import}

    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--max_steps", type=int, default=1000)
    args = p.parse_args()
    model = torch.nn.Linear(4, 2)
    {wrap}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(list(range(999)), batch_size=args.batch_size)
    for step, batch in zip(range(args.max_steps), loader):
        model(batch).sum().backward()
        opt.step()
"""


def _plain(tmp_path, extra_import: str = "", wrap: str = "") -> dict:
    make_job(tmp_path, {"train.py": PLAIN.format(extra_import=extra_import, wrap=wrap)})
    return analyze_code(tmp_path, "python train.py", use_llm=False).facts


def test_a_plain_process_that_replicates_nothing_has_its_loader_batch_as_the_global_batch(tmp_path):
    f = _plain(tmp_path)
    assert f["micro_batch_size"].value == 32
    assert f["global_batch_size"].value == 32


def test_a_plain_process_with_data_parallel_keeps_its_gpu_count_and_per_gpu_batch_open(tmp_path):
    f = _plain(tmp_path, wrap="model = torch.nn.DataParallel(model)")
    assert f.get("micro_batch_size") is None or f["micro_batch_size"].value is None


def test_an_unknown_third_party_trainer_library_leaves_the_global_batch_open(tmp_path):
    f = _plain(tmp_path, extra_import="import fancytrainer")
    assert f.get("global_batch_size") is None or f["global_batch_size"].value is None


def test_a_local_module_with_a_multi_device_call_leaves_the_global_batch_open(tmp_path):
    make_job(tmp_path, {"helpers/__init__.py": "", "helpers/par.py": "import torch\n\ndef wrap(m):\n"
                        "    return torch.nn.parallel.DistributedDataParallel(m)\n"})
    f = _plain(tmp_path, extra_import="from helpers.par import wrap")
    # the helper is read or scanned: its DistributedDataParallel could replicate the model
    assert f.get("global_batch_size") is None or f["global_batch_size"].value is None


EMA = """
    import argparse
    import torch
    import torch.distributed as dist

    def accumulate(a, b, decay=0.999):
        pass

    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--iter", type=int, default=1000)
    args = p.parse_args()
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
    loader = torch.utils.data.DataLoader(list(range(99)), batch_size=args.batch)
    accum = 0.5 ** (32 / (10 * 1000))
    for i in range(args.iter):
        accumulate(model, model, accum)
"""


def test_a_float_valued_accum_is_a_moving_average_decay_not_gradient_accumulation(tmp_path):
    make_job(tmp_path, {"train.py": EMA})
    f = analyze_code(tmp_path, "torchrun --nproc_per_node=4 train.py --batch 8", use_llm=False).facts
    assert f["micro_batch_size"].value == 8
    assert f["grad_accum_steps"].value == 1
    assert f["global_batch_size"].value == 32


CALLED = """
    import argparse

    def train(env_id, num_timesteps, n_envs=8, nminibatches=4, n_steps=128, gamma=0.99):
        pass

    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--env", default="Pong")
        p.add_argument("--num_timesteps", type=int, default=10000)
        args = p.parse_args()
        train(args.env, num_timesteps=args.num_timesteps)

    if __name__ == "__main__":
        main()
"""


def test_an_entry_function_runs_with_the_rollout_defaults_its_call_leaves_unset(tmp_path):
    make_job(tmp_path, {"run.py": CALLED})
    f = analyze_code(tmp_path, "python run.py", use_llm=False).facts
    assert f["global_batch_size"].value == 8 * 128 // 4


def test_called_defaults_are_only_those_every_call_leaves_unset_and_none_under_a_starred_call():
    text = CALLED + "\n    train('x', 5, n_envs=2)\n"
    import textwrap

    got = {n: v for n, v, _ in called_function_defaults(textwrap.dedent(text), ROLLOUT_LIKE)}
    assert got == {"nminibatches": 4, "n_steps": 128}  # n_envs is passed by one call; gamma is no rollout name
    starred = textwrap.dedent(CALLED).replace("num_timesteps=args.num_timesteps)", "**vars(args))")
    assert called_function_defaults(starred, ROLLOUT_LIKE) == []


GYMNAX_YAML = """
    train_config:
      num_train_steps: 10000
      num_train_envs: 16
      gamma: 0.99
      n_steps: 32
      n_minibatch: 4
"""

GYMNAX_TRAIN = """
    import argparse
    import yaml

    p = argparse.ArgumentParser()
    p.add_argument("-config", "--config_fname", default="cfg.yaml")
    args = p.parse_args()
    cfg = yaml.safe_load(open(args.config_fname))
"""


def test_gymnax_style_env_and_minibatch_names_give_the_minibatch(tmp_path):
    make_job(tmp_path, {"train.py": GYMNAX_TRAIN, "agents/ppo.yaml": GYMNAX_YAML})
    f = analyze_code(tmp_path, "python train.py -config agents/ppo.yaml", use_llm=False).facts
    assert f["global_batch_size"].value == 16 * 32 // 4


def test_a_stated_total_bs_is_the_global_batch(tmp_path):
    make_job(tmp_path, {"train.py": PLAIN.format(extra_import="", wrap="").replace("--batch_size", "--total_bs")
                        .replace("args.batch_size", "args.total_bs")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["global_batch_size"].value == 32


ONEFLOW_TRAIN = """
    import argparse
    import oneflow as flow

    p = argparse.ArgumentParser()
    p.add_argument("--micro_batch_size", type=int, default=16)
    args = p.parse_args()
"""


def test_oneflows_launcher_starts_nproc_per_node_processes(tmp_path):
    make_job(tmp_path, {"train.py": ONEFLOW_TRAIN})
    f = analyze_code(tmp_path, "python3 -m oneflow.distributed.launch --nproc_per_node 4 --nnodes 1 train.py",
                     use_llm=False).facts
    assert f["num_gpus"].value == 4


NULL_ACCUM_YAML = """
    train:
      train_micro_batch_size: 16
      global_batch_size: null
      num_accumulation_steps: null
      train_iter: 1000
"""


def test_accumulation_and_global_batch_both_none_resolve_accumulation_one(tmp_path):
    make_job(tmp_path, {"train.py": ONEFLOW_TRAIN.replace("--micro_batch_size", "--config-file"),
                        "cfg.yaml": NULL_ACCUM_YAML})
    cmd = "torchrun --nproc_per_node 4 train.py --config-file cfg.yaml"
    f = analyze_code(tmp_path, cmd, use_llm=False).facts
    assert f["grad_accum_steps"].value == 1
    assert f["global_batch_size"].value == 64
    stated = NULL_ACCUM_YAML.replace("num_accumulation_steps: null", "num_accumulation_steps: 2")
    make_job(tmp_path, {"cfg.yaml": stated})
    f = analyze_code(tmp_path, cmd, use_llm=False).facts
    assert f["grad_accum_steps"].value == 2  # a stated count is read as it is, never replaced by 1


SPLITTER = """
    from torch.utils.data import BatchSampler, Sampler


    class RankShare(Sampler):
        def __init__(self, batches, rank=0, world_size=1):
            self.batches, self.rank, self.world_size = batches, rank, world_size

        def __iter__(self):
            for b in self.batches:
                n = len(b) // self.world_size
                yield b[self.rank * n:(self.rank + 1) * n]


    def loop(args, data, rank, world_size):
        batches = BatchSampler(data, args.train_batch_size, False)
        batches = RankShare(batches, rank=rank, world_size=world_size)
        return batches
"""


def test_a_rank_splitting_sampler_in_a_module_past_the_file_budget_makes_the_batch_global(tmp_path):
    fillers = {f"pkg/m{i}.py": "X = 1\n" for i in range(20)}
    imports = "\n    ".join(f"import pkg.m{i}" for i in range(20))
    train = f"""
    import argparse
    import torch
    {imports}
    import pkg.trainer

    p = argparse.ArgumentParser()
    p.add_argument("--train_batch_size", type=int, default=64)
    args = p.parse_args()
    torch.distributed.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
    pkg.trainer.loop(args, list(range(99)), 0, 1)
    """
    make_job(tmp_path, {**fillers, "pkg/__init__.py": "", "pkg/trainer.py": SPLITTER, "train.py": train})
    f = analyze_code(tmp_path, "torchrun --nproc_per_node 2 train.py", use_llm=False).facts
    assert f["global_batch_size"].value == 64
    assert f["micro_batch_size"].value == 32


MESH_YAML = """
    hardware: gpu
    per_device_batch_size: 2
    gradient_accumulation_steps: 1
    steps: 100
    dcn_data_parallelism: -1
    dcn_fsdp_parallelism: 1
    dcn_tensor_parallelism: 1
    ici_data_parallelism: 1
    ici_fsdp_parallelism: -1
    ici_tensor_parallelism: 1
"""

MESH_TRAIN = """
    import sys
    import yaml
    import jax

    cfg = yaml.safe_load(open(sys.argv[1]))
    for a in sys.argv[2:]:
        k, v = a.split("=", 1)
        cfg[k] = v
"""


def test_a_fully_stated_gpu_mesh_gives_the_device_count_and_a_placeholder_leaves_it_open(tmp_path):
    make_job(tmp_path, {"train.py": MESH_TRAIN, "base.yml": MESH_YAML})
    cmd = "python train.py base.yml dcn_data_parallelism=1 ici_fsdp_parallelism=4"
    f = analyze_code(tmp_path, cmd, use_llm=False).facts
    assert f["num_gpus"].value == 4
    assert f["global_batch_size"].value == 8
    f = analyze_code(tmp_path, "python train.py base.yml ici_fsdp_parallelism=4", use_llm=False).facts
    assert f.get("num_gpus") is None or f["num_gpus"].value is None  # dcn_data_parallelism -1 fills the rest
    f = analyze_code(tmp_path, cmd + " ici_tensor_parallelism=2", use_llm=False).facts
    assert f.get("num_gpus") is None or f["num_gpus"].value is None  # a model axis: not read


HUGECTR = """
    import hugectr

    solver = hugectr.CreateSolver(batchsize_eval=1000, batchsize=4096, lr=0.001, vvgpu={gpus},
                                  repeat_dataset=True)
    model = hugectr.Model(solver, None, None)
    model.fit(max_iter=100)
"""


def test_hugectr_createsolver_batchsize_is_global_and_vvgpu_lists_the_gpus(tmp_path):
    make_job(tmp_path, {"train.py": HUGECTR.format(gpus="[[0, 1, 2, 3]]")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert (f["global_batch_size"].value, f["num_gpus"].value, f["micro_batch_size"].value) == (4096, 4, 1024)


SAMPLER_PROCESS = """
    import argparse
    from multiprocessing import Process, Queue
    import torch


    def sample(q):
        {body}


    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=32)
    args = p.parse_args()
    q = Queue()
    Process(target=sample, args=(q,)).start()
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(list(range(999)), batch_size=args.batch_size)
    for batch in loader:
        model(batch).sum().backward()
        opt.step()
"""


def test_a_cpu_sampler_process_does_not_make_a_replica_but_a_process_on_the_gpu_does(tmp_path):
    make_job(tmp_path, {"train.py": SAMPLER_PROCESS.format(body="q.put([1, 2, 3])")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["global_batch_size"].value == 32
    make_job(tmp_path, {"train.py": SAMPLER_PROCESS.format(body="q.put(torch.zeros(3).cuda())")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    pd = f.get("parallelism.data")
    assert pd is None or "replicates the model on no other device" not in (pd.note or "")
