"""nanoGPT style templates: a globals-and-configurator trainer with a config file per run."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub, torchrun

_NANO_TRAIN = '''"""Small GPT trainer (nanoGPT style): globals, a config file, then --key=value overrides."""
import math
import os
import time

import torch
from torch.distributed import init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import GPT, GPTConfig

out_dir = "out"
eval_interval = 2000
log_interval = 1
eval_iters = 200
init_from = "scratch"
dataset = "openwebtext"
gradient_accumulation_steps = 40
batch_size = 12
block_size = 1024
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
learning_rate = 6e-4
max_iters = 600000
dtype = "bfloat16"
compile = True
exec(open("configurator.py").read())  # noqa: S102 - overrides from the config file / command line

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="nccl")
    gradient_accumulation_steps //= int(os.environ["WORLD_SIZE"])
model = GPT(GPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, dropout=dropout))
model.to("cuda")
if ddp:
    model = DDP(model, device_ids=[int(os.environ["LOCAL_RANK"])])
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
iter_num = 0
while iter_num <= max_iters:
    for micro_step in range(gradient_accumulation_steps):
        x = torch.randint(0, 50304, (batch_size, block_size), device="cuda")
        logits, loss = model(x, x)
        (loss / gradient_accumulation_steps).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
'''

_NANO_CONFIGURATOR = '''"""Overrides: `python train.py config/x.py --batch_size=32` (file first, then --key=value)."""
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        exec(open(arg).read())  # noqa: S102
    else:
        key, val = arg[2:].split("=", 1)
        try:
            globals()[key] = literal_eval(val)
        except (SyntaxError, ValueError):
            globals()[key] = val
'''

_NANO_MODEL = '''from dataclasses import dataclass

import torch.nn as nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.h = nn.ModuleList(nn.TransformerEncoderLayer(config.n_embd, config.n_head) for _ in range(config.n_layer))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        x = self.wte(idx)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
'''

_NANO_CONFIG = '''# <<desc>>
wandb_log = False
dataset = "<<dataset>>"
init_from = "<<init>>"
batch_size = <<mbs>>
block_size = <<seq>>
gradient_accumulation_steps = <<accum>>
n_layer = <<layers>>
n_head = <<heads>>
n_embd = <<embd>>
learning_rate = <<lr>>
max_iters = <<steps>>
lr_decay_iters = <<steps>>
eval_interval = <<eval>>
log_interval = <<log>>
'''


def _nanogpt(cfg: str, layers: int, heads: int, embd: int, dataset: str, init: str = "scratch") -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        # nanoGPT divides the accumulation by the world size, so the file holds accum x world.
        conf = _sub(_NANO_CONFIG, desc=f"{cfg}: {layers} layers, {embd} wide, {p.num_gpus} GPU(s)", dataset=dataset,
                    init=init, mbs=p.micro_batch, seq=p.seq_len, accum=p.grad_accum * p.num_gpus, layers=layers,
                    heads=heads, embd=embd, lr=f"{p.lr:.1e}", steps=p.steps, eval=p.eval_every or 2000,
                    log=p.log_every)
        cmd = torchrun(p, f"train.py config/{cfg}.py")
        if p.variant:
            cmd += f" --learning_rate={p.lr:.1e}"
        return {"train.py": _NANO_TRAIN, "configurator.py": _NANO_CONFIGURATOR, "model.py": _NANO_MODEL,
                f"config/{cfg}.py": conf, "command.txt": cmd + "\n"}
    return render
