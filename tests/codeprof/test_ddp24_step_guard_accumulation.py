"""A training loop that steps its optimizer only under `if <batch counter> % N == 0` accumulates N loader
batches per update, whatever the setting is called: the global batch counts them (a DDP script with an
`--update-every` flag, a one-process DataParallel job whose config splits a batch into pieces). Guards on
other things (a scheduler, an epoch counter) or two different N leave the accumulation unread."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

DDP_ENTRY = """
    import argparse
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=8, help="images per process")
    p.add_argument("--update-every", type=int, default=1)
    p.add_argument("--epochs", type=int, default=30)
    args = p.parse_args()

    dist.init_process_group("nccl")
    net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16).cuda())
    optim = torch.optim.AdamW(net.parameters(), lr=3e-4)
    data = list(range(4096))
    loader = DataLoader(data, batch_size=args.batch_size, sampler=DistributedSampler(data))
    for epoch in range(args.epochs):
        for it, x in enumerate(loader):
            net(x.cuda()).mean().backward()
            if (it + 1) % args.update_every == 0:
                optim.step()
                optim.zero_grad()
"""

PIECES_CONFIG = """
    from easydict import EasyDict

    C = EasyDict()
    C.batch = 48
    C.pieces = 6
    C.max_epochs = 12
"""

DP_ENTRY = """
    import torch
    from torch.utils.data import DataLoader
    from settings import C


    def fit(model, conf):
        loader = DataLoader(list(range(960)), batch_size=conf.batch // conf.pieces, shuffle=True)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        seen = 0
        for ep in range(conf.max_epochs):
            for imgs in loader:
                seen += 1
                model(imgs.cuda()).sum().backward()
                if seen % conf.pieces == 0:
                    opt.step()
                    model.zero_grad()


    if __name__ == "__main__":
        net = torch.nn.Linear(8, 8)
        if torch.cuda.device_count() > 1:
            net = torch.nn.DataParallel(net)
        fit(model=net.cuda(), conf=C)
"""


def _ddp(tmp_path, loop_tail: str):
    make_job(tmp_path, {"train.py": DDP_ENTRY.replace(
        "            if (it + 1) % args.update_every == 0:\n                optim.step()\n", loop_tail)})


def test_an_optimizer_step_every_n_batches_multiplies_the_ddp_global_batch(tmp_path):
    make_job(tmp_path, {"train.py": DDP_ENTRY})
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=4 train.py --batch-size 8 --update-every 4",
                       use_llm=False)
    assert res.value("micro_batch_size") == 8
    assert res.value("grad_accum_steps") == 4
    assert res.value("global_batch_size") == 128


def test_a_dataparallel_job_that_splits_its_batch_into_pieces_counts_every_piece(tmp_path):
    make_job(tmp_path, {"settings.py": PIECES_CONFIG, "train.py": DP_ENTRY})
    res = analyze_code(tmp_path, "python train.py", env={"CUDA_VISIBLE_DEVICES": "0,1"}, use_llm=False)
    assert res.value("grad_accum_steps") == 6
    assert res.value("global_batch_size") == 48
    assert res.value("micro_batch_size") == 4


def test_a_scheduler_stepping_every_n_batches_is_not_accumulation(tmp_path):
    _ddp(tmp_path, "            optim.step()\n            if (it + 1) % args.update_every == 0:\n"
                   "                sched.step()\n")
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=4 train.py --batch-size 8 --update-every 4",
                       use_llm=False)
    assert res.value("grad_accum_steps") in (None, 1)
    assert res.value("global_batch_size") == 32


def test_an_optimizer_step_every_n_epochs_is_not_accumulation(tmp_path):
    _ddp(tmp_path, "            if (epoch + 1) % args.update_every == 0:\n                optim.step()\n")
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=4 train.py --batch-size 8 --update-every 4",
                       use_llm=False)
    assert res.value("grad_accum_steps") in (None, 1)


def test_two_guards_with_different_counts_leave_the_accumulation_unread(tmp_path):
    _ddp(tmp_path, "            if it % 2 == 0:\n                optim.step()\n"
                   "            if it % args.update_every == 0:\n                optim.step()\n")
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=4 train.py --batch-size 8 --update-every 4",
                       use_llm=False)
    assert res.value("grad_accum_steps") in (None, 1)


GAN_ENTRY = """
    import argparse
    import torch
    from torch.utils.data import DataLoader

    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--critic_rounds", type=int, default=5)
    p.add_argument("--n_epochs", type=int, default=50)
    opt = p.parse_args()

    gen, disc = torch.nn.Linear(8, 8).cuda(), torch.nn.Linear(8, 1).cuda()
    opt_gen = torch.optim.Adam(gen.parameters())
    opt_disc = torch.optim.Adam(disc.parameters())
    loader = DataLoader(list(range(1000)), batch_size=opt.batch_size, shuffle=True)
    for epoch in range(opt.n_epochs):
        for i, real in enumerate(loader):
            disc(real.cuda()).mean().backward()
            opt_disc.step()
            if i % opt.critic_rounds == 0:
                disc(gen(real.cuda())).mean().backward()
                opt_gen.step()
"""

SWITCH_ENTRY = DDP_ENTRY.replace(
    "            if (it + 1) % args.update_every == 0:\n                optim.step()\n                optim.zero_grad()\n",
    "            if args.update_every > 1:\n                if (it + 1) % args.update_every == 0:\n"
    "                    optim.step()\n            else:\n                optim.step()\n")


def test_a_generator_updated_every_few_discriminator_steps_is_not_accumulation(tmp_path):
    make_job(tmp_path, {"wgan.py": GAN_ENTRY})
    res = analyze_code(tmp_path, "python wgan.py --batch_size 64", use_llm=False)
    assert res.value("grad_accum_steps") in (None, 1)
    assert res.value("global_batch_size") in (None, 64)


def test_an_accumulation_switch_with_a_plain_step_in_its_else_branch_still_accumulates(tmp_path):
    make_job(tmp_path, {"train.py": SWITCH_ENTRY})
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=2 train.py --batch-size 8 --update-every 3",
                       use_llm=False)
    assert res.value("grad_accum_steps") == 3
    assert res.value("global_batch_size") == 48
