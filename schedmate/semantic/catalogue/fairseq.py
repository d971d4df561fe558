"""fairseq style templates: a sequence-model trainer with --arch, --max-update, --max-tokens."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub, torchrun

_FAIRSEQ_TRAIN = '''"""Sequence model trainer with fairseq-style options (--arch, --max-update, --max-tokens)."""
import argparse

import torch
import torch.distributed as dist

from models import build_model

ap = argparse.ArgumentParser()
ap.add_argument("data")
ap.add_argument("--task", default="<<task>>")
ap.add_argument("--arch", default="<<arch>>")
ap.add_argument("--max-update", "--max-steps", dest="max_steps", type=int, default=100000)
ap.add_argument("--max-tokens", type=int, default=4096)
ap.add_argument("--update-freq", type=int, default=1)
ap.add_argument("--lr", type=float, default=5e-4)
ap.add_argument("--log-interval", type=int, default=100)
ap.add_argument("--save-interval-updates", type=int, default=0)
ap.add_argument("--fp16", action="store_true")
args = ap.parse_args()

dist.init_process_group("nccl")
model = build_model(args.arch).cuda()
model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
for num_updates in range(1, args.max_steps + 1):
    for _ in range(args.update_freq):
        tokens = torch.randint(0, 32000, (args.max_tokens // 128, 128), device="cuda")
        loss = model(tokens).float().mean() / args.update_freq
        loss.backward()
    opt.step()
    opt.zero_grad()
'''

_FAIRSEQ_MODELS = '''import torch.nn as nn


class TransformerMT(nn.Module):
    def __init__(self, dim=1024, heads=16, layers=6):
        super().__init__()
        self.embed = nn.Embedding(32000, dim)
        self.body = nn.Transformer(d_model=dim, nhead=heads, num_encoder_layers=layers, num_decoder_layers=layers)
        self.out = nn.Linear(dim, 32000)

    def forward(self, tokens):
        x = self.embed(tokens)
        return self.out(self.body(x, x))


class LSTMLanguageModel(nn.Module):
    def __init__(self, dim=1024, layers=2):
        super().__init__()
        self.embed = nn.Embedding(32000, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=layers, batch_first=True)
        self.out = nn.Linear(dim, 32000)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.out(h)


def build_model(arch):
    if arch.startswith("lstm"):
        return LSTMLanguageModel()
    return TransformerMT()
'''


def _fairseq(task: str, arch: str, data: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        args = (f"{data} --task {task} --arch {arch} --max-update {p.steps} --max-tokens {p.micro_batch * 512} "
                f"--update-freq {p.grad_accum} --lr {p.lr:.1e} --log-interval {p.log_every} "
                f"--save-interval-updates {p.ckpt_every or p.steps} --fp16")
        cmd = torchrun(p, "train.py") + " " + args
        if p.num_gpus == 1:
            cmd = f"torchrun --nproc_per_node=1 train.py {args}"
        return {"train.py": _sub(_FAIRSEQ_TRAIN, task=task, arch=arch), "models.py": _FAIRSEQ_MODELS,
                "command.txt": cmd + "\n"}
    return render
