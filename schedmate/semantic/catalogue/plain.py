"""Plain PyTorch templates (a training loop by hand, evaluation, a Slurm catch-all) and their data modules."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub, layout, torchrun

_PLAIN = '''"""<<desc>>"""
import argparse
import os
import time

import torch
import torch.distributed as dist
<<imports>>

ap = argparse.ArgumentParser()
ap.add_argument("--<<loop>>", type=int, default=<<default_len>>)
ap.add_argument("--batch-size", type=int, default=<<mbs>>)
ap.add_argument("--lr", type=float, default=<<lr>>)
ap.add_argument("--log-every", type=int, default=20)
<<extra_args>>args = ap.parse_args()

distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
if distributed:
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = <<build>>.cuda()
<<wrap>>opt = torch.optim.<<opt>>(model.parameters(), lr=args.lr)
<<body>>
'''

_STEP_BODY = '''t0 = time.time()
for step in range(1, args.max_steps + 1):
    x, y = next_batch(args.batch_size)
    loss = loss_fn(model, x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % args.log_every == 0 and (not distributed or dist.get_rank() == 0):
        dt = (time.time() - t0) / args.log_every
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} step {step}/{args.max_steps} | loss {loss.item():.4f} | {dt:.3f}s/it")
        t0 = time.time()
'''

_EPOCH_BODY = '''for epoch in range(args.epochs):
    for i, (x, y) in enumerate(loader(args.batch_size)):
        loss = loss_fn(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def _plain(desc: str, build: str, imports: str, opt: str = "AdamW", loop: str = "max-steps",
           extra_args: str = "", script: str = "train.py", extra_files: dict[str, str] | None = None,
           ddp: bool = True, cpu: bool = False) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        body = _STEP_BODY if loop == "max-steps" else _EPOCH_BODY
        wrap = ("if distributed:\n    model = torch.nn.parallel.DistributedDataParallel(model)\n" if ddp else "")
        text = _sub(_PLAIN, desc=desc, imports=imports, loop=loop, default_len=1000 if loop == "max-steps" else 10,
                    mbs=p.micro_batch, lr=f"{p.lr:.1e}", extra_args=extra_args, build=build, wrap=wrap,
                    opt=opt, body=body)
        if cpu:
            text = text.replace(".cuda()", "").replace('dist.init_process_group("nccl")', 'dist.init_process_group("gloo")')
            text = text.replace('    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n', "")
        length = f"--max-steps {p.steps}" if loop == "max-steps" else f"--epochs {p.epochs}"
        args = f"{length} --batch-size {p.micro_batch} --lr {p.lr:.1e} --log-every {p.log_every}"
        if cpu:
            cmd = f"CUDA_VISIBLE_DEVICES= python {script} {args}"
        else:
            cmd = f"{torchrun(p, script)} {args}"
        files = {script: text, "command.txt": cmd + "\n"}
        files.update(extra_files or {})
        return files
    return render


_EVAL = '''"""<<desc>>"""
import argparse
import os

import torch
import torch.distributed as dist
<<imports>>

ap = argparse.ArgumentParser()
ap.add_argument("--max-steps", type=int, default=500, help="evaluation batches")
ap.add_argument("--batch-size", type=int, default=<<mbs>>)
ap.add_argument("--log-every", type=int, default=20)
args = ap.parse_args()

distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
if distributed:
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = <<build>>.cuda().eval()
total_loss, seen = 0.0, 0
with torch.no_grad():
    for step in range(1, args.max_steps + 1):
        x, y = next_batch(args.batch_size)
        total_loss += loss_fn(model, x, y).item() * len(x)
        seen += len(x)
        if step % args.log_every == 0 and (not distributed or dist.get_rank() == 0):
            print(f"step {step}/{args.max_steps} | loss {total_loss / seen:.4f}")
if distributed:
    t = torch.tensor([total_loss, seen], device="cuda")
    dist.all_reduce(t)
    total_loss, seen = t.tolist()
print(f"eval loss {total_loss / seen:.4f} over {int(seen)} samples")
'''


def _eval(desc: str, build: str, imports: str, script: str, extra_files: dict[str, str]) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        text = _sub(_EVAL, desc=desc, imports=imports, mbs=p.micro_batch, build=build)
        cmd = f"{torchrun(p, script)} --max-steps {p.steps} --batch-size {p.micro_batch} --log-every {p.log_every}"
        return {script: text, "command.txt": cmd + "\n", **extra_files}
    return render


_SRUN_TRAIN = '''"""Generic data-parallel trainer launched by Slurm (one task per GPU); the model comes from --arch."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("--arch", default="resnet50")
ap.add_argument("--max-steps", type=int, default=1000)
ap.add_argument("--batch-size", type=int, default=64)
ap.add_argument("--lr", type=float, default=0.1)
ap.add_argument("--log-every", type=int, default=20)
args = ap.parse_args()

dist.init_process_group("nccl", rank=int(os.environ["SLURM_PROCID"]), world_size=int(os.environ["SLURM_NTASKS"]))
torch.cuda.set_device(int(os.environ["SLURM_LOCALID"]))
model = torch.nn.parallel.DistributedDataParallel(torchvision.models.get_model(args.arch).cuda())
opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
for step in range(1, args.max_steps + 1):
    x = torch.randn(args.batch_size, 3, 224, 224, device="cuda")
    loss = model(x).float().logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % args.log_every == 0 and dist.get_rank() == 0:
        print(f"step {step}/{args.max_steps} | loss {loss.item():.4f}")
'''

def _srun(p: Params) -> dict[str, str]:
    arch = p.arch
    if layout(p.num_gpus) is not None:
        tasks = f"--nodes={p.nodes} --ntasks-per-node={p.gpus_per_node}"
    else:  # e.g. 11 GPUs: Slurm spreads the tasks, the node count is not fixed by the command
        tasks = f"--ntasks={p.num_gpus}"
    cmd = (f"srun {tasks} --gpus-per-task=1 --cpus-per-task=8 python train.py --arch {arch} "
           f"--max-steps {p.steps} --batch-size {p.micro_batch} --lr {p.lr:g} --log-every {p.log_every}")
    return {"train.py": _SRUN_TRAIN, "command.txt": cmd + "\n"}


# ----------------------------------------------------------------------------- the catalogue
_LM_IMPORTS = "import torch.nn as nn\n\nfrom data import next_batch, loss_fn"
_CV_IMPORTS = "import torchvision\n\nfrom data import next_batch, loss_fn"

_PLAIN_DATA = '''import torch
import torch.nn.functional as F


def next_batch(batch_size):
    x = torch.randn(batch_size, <<shape>>, device="cuda")
    y = torch.randint(0, <<classes>>, (batch_size,), device="cuda")
    return x, y


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def loader(batch_size):
    for _ in range(<<batches>>):
        yield next_batch(batch_size)
'''


def _data(shape: str, classes: int, batches: int = 1000) -> dict[str, str]:
    return {"data.py": _sub(_PLAIN_DATA, shape=shape, classes=classes, batches=batches)}
