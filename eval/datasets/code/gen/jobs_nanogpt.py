"""nanoGPT-style jobs: a globals trainer, python config files and `--key=value` overrides."""

from .common import job

NANO_TRAIN = '''
"""
Train a GPT. Single GPU:  python train.py --batch_size=32 --compile=False
DDP on one node:          torchrun --standalone --nproc_per_node=8 train.py
Config files (python) and --key=value overrides are applied by configurator.py.
"""
import math
import os
import time

import numpy as np
import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import GPT, GPTConfig

# -----------------------------------------------------------------------------
# default config values: gpt2 (124M) on OpenWebText
out_dir = "out"
eval_interval = 2000
init_from = "scratch"  # 'scratch' or 'resume' or 'gpt2*'
dataset = "openwebtext"
gradient_accumulation_steps = 5 * 8  # used to simulate larger batch sizes
batch_size = 12  # micro-batch size
block_size = 1024
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
learning_rate = 6e-4
max_iters = 600000
device = "cuda"
dtype = "bfloat16"
compile = True
config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, float, bool, str))]
exec(open("configurator.py").read())  # overrides from command line or config file
# -----------------------------------------------------------------------------

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="nccl")
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    ddp_world_size = 1
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
print(f"tokens per iteration will be: {tokens_per_iter:,}")

data_dir = os.path.join("data", dataset)
meta_vocab_size = 65 if dataset == "shakespeare_char" else None
model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  vocab_size=meta_vocab_size if meta_vocab_size is not None else 50304, dropout=dropout)
if init_from == "scratch":
    model = GPT(GPTConfig(**model_args))
elif init_from.startswith("gpt2"):
    model = GPT.from_pretrained(init_from, dict(dropout=dropout))
model.to(device)
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = torch.amp.autocast(device_type="cuda", dtype=ptdtype)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95), "cuda")
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])


def get_batch(split):
    data = np.memmap(os.path.join(data_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


iter_num = 0
X, Y = get_batch("train")
while iter_num <= max_iters:
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
if ddp:
    destroy_process_group()
'''
NANO_MODEL = '''
"""GPT language model: token + position embeddings, pre-norm blocks, tied head."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.n_head = config.n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.h = nn.ModuleList([CausalSelfAttention(config) for _ in range(config.n_layer)])
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx, targets=None):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1), device=idx.device))
        for blk in self.h:
            x = x + blk(x)
        logits = self.lm_head(x)
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
'''
CONFIGURATOR = '''
"""Poor man's configurator: `python train.py config/x.py --batch_size=32` overrides globals of train.py."""
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        assert not arg.startswith("--")
        config_file = arg
        print(f"Overriding config with {config_file}:")
        with open(config_file) as f:
            print(f.read())
        exec(open(config_file).read())
    else:
        assert arg.startswith("--")
        key, val = arg.split("=")
        key = key[2:]
        if key in globals():
            try:
                attempt = literal_eval(val)
            except (SyntaxError, ValueError):
                attempt = val
            globals()[key] = attempt
'''
SHAKESPEARE = '''
# train a miniature character-level shakespeare model
out_dir = "out-shakespeare-char"
eval_interval = 250
dataset = "shakespeare_char"
gradient_accumulation_steps = 1
batch_size = 64
block_size = 256  # context of up to 256 previous characters
n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.2
learning_rate = 1e-3
max_iters = 5000
'''
GPT2_CFG = '''
# config for training GPT-2 (124M) on 1 node of 8 GPUs
# 12 batch size * 1024 block size * 5 gradaccum * 8 GPUs = 491,520 tokens per iteration
batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8
max_iters = 600000
eval_interval = 1000
weight_decay = 1e-1
'''
FINETUNE = '''
import time

out_dir = "out-shakespeare"
eval_interval = 5
dataset = "shakespeare"
init_from = "gpt2-xl"  # this is the largest GPT-2 model
batch_size = 1
gradient_accumulation_steps = 32
max_iters = 20
learning_rate = 3e-5
'''
NANO_FILES = {"train.py": NANO_TRAIN, "model.py": NANO_MODEL, "configurator.py": CONFIGURATOR,
              "config/train_shakespeare_char.py": SHAKESPEARE, "config/train_gpt2.py": GPT2_CFG,
              "config/finetune_shakespeare.py": FINETUNE}

job("nanogpt_shakespeare_char_override",
    "python train.py config/train_shakespeare_char.py --compile=False --batch_size=32",
    NANO_FILES,
    framework="pytorch", model_family="gpt", params=10.7e6,
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, micro_batch_size=32,
    global_batch_size=32, grad_accum_steps=1, seq_len=256, train_steps=5000, precision="bf16")

job("nanogpt_gpt2_ddp_one_node",
    "torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py",
    NANO_FILES,
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=8, num_gpus=8, micro_batch_size=12,
    global_batch_size=480, grad_accum_steps=5, seq_len=1024, train_steps=600000, precision="bf16")

job("nanogpt_finetune_gpt2_xl_cli",
    "python train.py config/finetune_shakespeare.py --max_iters=50 --dtype=float16",
    NANO_FILES,
    framework="pytorch", model_family="gpt", model_name="gpt2-xl", params=1.5e9,
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, micro_batch_size=1,
    global_batch_size=32, grad_accum_steps=32, seq_len=1024, train_steps=50, precision="fp16")
