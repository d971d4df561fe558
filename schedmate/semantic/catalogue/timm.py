"""timm style templates: an ImageNet classification trainer with timm's arguments."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, torchrun

_TIMM_TRAIN = '''"""ImageNet classification trainer (timm style arguments)."""
import argparse

import timm
import torch
from timm.data import create_dataset, create_loader
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler_v2

parser = argparse.ArgumentParser(description="ImageNet training")
parser.add_argument("data_dir")
parser.add_argument("--model", default="resnet50")
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=300)
parser.add_argument("--lr", type=float, default=None)
parser.add_argument("--opt", default="sgd")
parser.add_argument("--sched", default="cosine")
parser.add_argument("--warmup-epochs", type=int, default=5)
parser.add_argument("--amp", action="store_true")
parser.add_argument("--log-interval", type=int, default=50)
parser.add_argument("--output", default="./output")


def main():
    args = parser.parse_args()
    torch.distributed.init_process_group("nccl")
    model = timm.create_model(args.model, num_classes=1000).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = create_optimizer_v2(model, opt=args.opt, lr=args.lr)
    scheduler, num_epochs = create_scheduler_v2(optimizer, sched=args.sched, num_epochs=args.epochs,
                                                warmup_epochs=args.warmup_epochs)
    train = create_loader(create_dataset("", root=args.data_dir, split="train"), input_size=(3, 224, 224),
                          batch_size=args.batch_size, is_training=True, distributed=True)
    for epoch in range(num_epochs):
        for x, y in train:
            with torch.autocast("cuda", enabled=args.amp):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step(epoch + 1)


if __name__ == "__main__":
    main()
'''


def _timm(model: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        args = (f"/data/imagenet --model {model} -b {p.micro_batch} --epochs {p.epochs} --lr {p.lr:g} "
                f"--amp --log-interval {p.log_every}")
        if p.num_gpus == 1:
            cmd = f"torchrun --nproc_per_node=1 train.py {args}"
        else:
            cmd = torchrun(p, "train.py") + " " + args
        return {"train.py": _TIMM_TRAIN, "command.txt": cmd + "\n"}
    return render
