"""A data loader fed `batch_size=<total> // <GPU count>` names the global batch: the total it divides
(codeprof/static/batch.py `_split_setting`), as in GAN training loops that take a total batch and a GPU count."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

_LOOP = '''import torch
from torch.utils.data import DataLoader, DistributedSampler


def accumulate_gradients(net, part, rank):
    net(part.cuda(rank)).sum().backward()


def run_loop(rank=0, num_gpus=1, batch_size=4, batch_gpu=4, total_kimg=100, dataset=None):
    sampler = DistributedSampler(dataset, num_replicas=num_gpus, rank=rank)
    loader = DataLoader(dataset, sampler=sampler, batch_size=batch_size // num_gpus)
    net = torch.nn.Linear(3, 1).cuda(rank)
    opt = torch.optim.Adam(net.parameters())
    seen = 0
    while seen < total_kimg * 1000:
        opt.zero_grad()
        for part in next(iter(loader)).split(batch_gpu):
            accumulate_gradients(net, part, rank)
        opt.step()
        seen += batch_size
'''

_MAIN = '''import click
import torch
from loop import run_loop


class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def worker(rank, c):
    run_loop(rank=rank, **c)


@click.command()
@click.option("--gpus", type=int, required=True, help="Number of GPUs to use")
@click.option("--total", type=int, required=True, help="Total batch size")
@click.option("--chunk", type=int, default=None, help="Limit batch size per GPU")
def main(**kwargs):
    opts = AttrDict(kwargs)
    c = AttrDict()
    c.num_gpus = opts.gpus
    c.batch_size = opts.total
    c.batch_gpu = opts.chunk or opts.total // opts.gpus
    torch.multiprocessing.spawn(fn=worker, args=(c,), nprocs=c.num_gpus)


if __name__ == "__main__":
    main()
'''


def _job(tmp_path: Path) -> Path:
    (tmp_path / "loop.py").write_text(_LOOP)
    (tmp_path / "train_gan.py").write_text(_MAIN)
    return tmp_path


def test_the_total_a_loader_divides_by_the_gpu_count_is_the_global_batch(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path), "python train_gan.py --gpus=4 --total=48", use_llm=False)
    assert prof.facts["num_gpus"].value == 4
    assert prof.facts["micro_batch_size"].value == 12
    assert prof.facts["global_batch_size"].value == 48


def test_a_loader_batch_halved_by_a_constant_is_a_per_process_batch_not_a_split_total(tmp_path: Path) -> None:
    job = _job(tmp_path)
    (job / "loop.py").write_text(_LOOP.replace("batch_size=batch_size // num_gpus", "batch_size=batch_size // 2"))
    prof = analyze_code(job, "python train_gan.py --gpus=4 --total=48", use_llm=False)
    got = prof.facts.get("global_batch_size")
    assert got is None or got.value != 48  # 48 is no longer split over the 4 GPUs


def test_a_doubled_split_batch_of_an_evaluation_loader_is_not_read_as_the_training_total(tmp_path: Path) -> None:
    job = _job(tmp_path)
    loop = _LOOP.replace("batch_size=batch_size // num_gpus", "batch_size=batch_gpu")
    loop += '''

def check(dataset, batch_size=4, num_gpus=1):
    return DataLoader(dataset, batch_size=batch_size // num_gpus * 2)
'''
    (job / "loop.py").write_text(loop)
    prof = analyze_code(job, "python train_gan.py --gpus=4 --total=48 --chunk=6", use_llm=False)
    got = prof.facts.get("global_batch_size")
    assert got is None or got.value == 24  # 6 per GPU x 4 GPUs, not the evaluation loader's total
