"""nanoGPT-style, torchtitan-style TOML, Hydra, shell wrappers, RL, recommenders, JAX, TensorFlow, Horovod."""

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

TITAN_TRAIN = '''
"""Llama-3 pre-training driven by a TOML job config (torchtitan-style)."""
import argparse
import os
import tomllib

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

from llama import Transformer, llama3_configs


def load_job_config():
    ap = argparse.ArgumentParser()
    ap.add_argument("--job.config_file", dest="config_file", required=True)
    ns, rest = ap.parse_known_args()
    with open(ns.config_file, "rb") as f:
        cfg = tomllib.load(f)
    return cfg


def main():
    cfg = load_job_config()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    par = cfg["parallelism"]
    world = dist.get_world_size()
    tp, pp, cp = par["tensor_parallel_degree"], par["pipeline_parallel_degree"], par.get("context_parallel_degree", 1)
    dp_shard = par["data_parallel_shard_degree"]
    if dp_shard == -1:
        dp_shard = world // (tp * pp * cp)
    mesh = init_device_mesh("cuda", (pp, dp_shard, cp, tp), mesh_dim_names=("pp", "dp_shard", "cp", "tp"))
    model = Transformer(llama3_configs[cfg["model"]["flavor"]]).cuda()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers:
        fully_shard(block, mesh=mesh["dp_shard"], mp_policy=mp)
    fully_shard(model, mesh=mesh["dp_shard"], mp_policy=mp)
    tr = cfg["training"]
    accum = tr["global_batch_size"] // (tr["local_batch_size"] * dp_shard)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["optimizer"]["lr"])
    for step in range(tr["steps"]):
        for _ in range(accum):
            x = torch.randint(0, 128256, (tr["local_batch_size"], tr["seq_len"]), device="cuda")
            loss = model(x).float().mean() / accum
            loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
'''
LLAMA_PY = '''
from dataclasses import dataclass

import torch.nn as nn


@dataclass
class ModelArgs:
    dim: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    vocab_size: int = 128256
    multiple_of: int = 1024
    ffn_dim_multiplier: float = 1.3


llama3_configs = {
    "debugmodel": ModelArgs(dim=256, n_layers=8, n_heads=16),
    "8B": ModelArgs(dim=4096, n_layers=32, n_heads=32),
    "70B": ModelArgs(dim=8192, n_layers=80, n_heads=64, ffn_dim_multiplier=1.3),
}


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(args.dim, args.n_heads) for _ in range(args.n_layers))
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(h)
'''


def titan_toml(flavor, local_bs, global_bs, seq, steps, tp, pp, cp=1):
    return f'''
[job]
dump_folder = "./outputs"
description = "Llama 3 {flavor} training"

[model]
name = "llama3"
flavor = "{flavor}"
tokenizer_path = "./assets/tokenizer/original/tokenizer.model"

[optimizer]
name = "AdamW"
lr = 3e-4

[training]
local_batch_size = {local_bs}
global_batch_size = {global_bs}
seq_len = {seq}
max_norm = 1.0
steps = {steps}
mixed_precision_param = "bfloat16"
dataset = "c4"

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = {tp}
pipeline_parallel_degree = {pp}
context_parallel_degree = {cp}

[checkpoint]
enable_checkpoint = true
interval = 500
'''


job("torchtitan_llama3_8b_toml",
    "torchrun --nproc_per_node=8 --rdzv_backend c10d --rdzv_endpoint=localhost:0 --local-ranks-filter 0 "
    "train.py --job.config_file train_configs/llama3_8b.toml",
    {"train.py": TITAN_TRAIN, "llama.py": LLAMA_PY,
     "train_configs/llama3_8b.toml": titan_toml("8B", 1, 32, 8192, 1000, 1, 1),
     "train_configs/llama3_70b.toml": titan_toml("70B", 2, 64, 8192, 3000, 8, 2),
     "train_configs/debug_model.toml": titan_toml("debugmodel", 8, 8, 2048, 10, 1, 1)},
    framework="pytorch", model_family="llama", model_name="llama3-8b", params=8.0e9,
    parallelism={"data": "fsdp"}, num_nodes=1, gpus_per_node=8, num_gpus=8, micro_batch_size=1,
    global_batch_size=32, grad_accum_steps=4, seq_len=8192, train_steps=1000, precision="bf16")

job("torchtitan_llama3_70b_multinode",
    "srun --nodes=8 --ntasks-per-node=1 --gpus-per-node=8 torchrun --nnodes 8 --nproc_per_node 8 "
    "--rdzv_id 101 --rdzv_backend c10d --rdzv_endpoint $HEAD_NODE_IP:29500 train.py "
    "--job.config_file train_configs/llama3_70b.toml",
    {"train.py": TITAN_TRAIN, "llama.py": LLAMA_PY,
     "train_configs/llama3_8b.toml": titan_toml("8B", 1, 32, 8192, 1000, 1, 1),
     "train_configs/llama3_70b.toml": titan_toml("70B", 2, 64, 8192, 3000, 8, 2)},
    framework="pytorch", model_family="llama", model_name="llama3-70b", params=70.6e9,
    parallelism={"data": "fsdp", "tensor": 8, "pipeline": 2}, num_nodes=8, gpus_per_node=8, num_gpus=64,
    micro_batch_size=2, global_batch_size=64, grad_accum_steps=8, seq_len=8192, train_steps=3000,
    precision="bf16")

job("torchtitan_llama3_8b_context_parallel",
    "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint $MASTER:29500 train.py "
    "--job.config_file long_context.toml",
    {"train.py": TITAN_TRAIN, "llama.py": LLAMA_PY,
     "long_context.toml": titan_toml("8B", 1, 4, 131072, 500, 1, 1, cp=4)},
    framework="pytorch", model_family="llama", model_name="llama3-8b", params=8.0e9,
    parallelism={"data": "fsdp", "context": 4}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=1,
    global_batch_size=4, grad_accum_steps=1, seq_len=131072, train_steps=500, precision="bf16")

HYDRA_TRAIN = '''
"""Lightning GPT training configured with Hydra (conf/config.yaml + model group)."""
import hydra
import lightning as L
import torch
from omegaconf import DictConfig
from torch.utils.data import DataLoader

from gptlib import GPTModule, RandomTokens


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    model = GPTModule(n_layer=cfg.model.n_layer, n_embd=cfg.model.n_embd, vocab_size=cfg.model.vocab_size,
                      lr=cfg.optim.lr)
    loader = DataLoader(RandomTokens(cfg.data.seq_len), batch_size=cfg.data.batch_size, num_workers=4)
    trainer = L.Trainer(accelerator="gpu", devices=cfg.trainer.devices, num_nodes=cfg.trainer.num_nodes,
                        strategy="ddp", precision=cfg.trainer.precision, max_steps=cfg.trainer.max_steps,
                        accumulate_grad_batches=cfg.trainer.accumulate_grad_batches)
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()
'''
GPTLIB = '''
import lightning as L
import torch
from torch import nn


class GPTModule(L.LightningModule):
    def __init__(self, n_layer, n_embd, vocab_size, lr):
        super().__init__()
        layer = nn.TransformerEncoderLayer(n_embd, n_embd // 64, 4 * n_embd, batch_first=True)
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.body = nn.TransformerEncoder(layer, n_layer)
        self.head = nn.Linear(n_embd, vocab_size)
        self.lr = lr

    def training_step(self, batch, _):
        logits = self.head(self.body(self.emb(batch[:, :-1]), is_causal=True))
        return nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, seq_len):
        self.seq_len = seq_len

    def __len__(self):
        return 100000

    def __getitem__(self, i):
        return torch.randint(0, 50257, (self.seq_len + 1,))
'''
HYDRA_CONF = '''
defaults:
  - model: gpt_small
  - _self_

trainer:
  devices: 1
  num_nodes: 1
  precision: bf16-mixed
  max_steps: 100000
  accumulate_grad_batches: 1

data:
  batch_size: 16  # per GPU
  seq_len: 1024

optim:
  lr: 3.0e-4
'''
GPT_SMALL = "n_layer: 12\nn_embd: 768\nvocab_size: 50257\n"
GPT_MEDIUM = "n_layer: 24\nn_embd: 1024\nvocab_size: 50257\n"
HYDRA_FILES = {"train.py": HYDRA_TRAIN, "gptlib.py": GPTLIB, "conf/config.yaml": HYDRA_CONF,
               "conf/model/gpt_small.yaml": GPT_SMALL, "conf/model/gpt_medium.yaml": GPT_MEDIUM}

job("hydra_lightning_gpt_medium",
    "python train.py model=gpt_medium trainer.devices=4 data.seq_len=2048",
    HYDRA_FILES,
    framework="lightning", model_family="gpt", model_name="gpt_medium", params=356e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=16,
    global_batch_size=64, grad_accum_steps=1, seq_len=2048, train_steps=100000, precision="bf16")

job("trap_hydra_command_overrides",
    "srun -N 2 --ntasks-per-node=8 python train.py trainer.devices=8 trainer.num_nodes=2 data.batch_size=64 "
    "trainer.accumulate_grad_batches=2 trainer.precision=16-mixed",
    HYDRA_FILES,
    notes="config says batch 16/bf16 (with a comment); the command overrides batch, accumulation and precision",
    framework="lightning", model_family="gpt", model_name="gpt_small", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=64,
    global_batch_size=2048, grad_accum_steps=2, seq_len=1024, train_steps=100000, precision="fp16")

WRAP_TRAIN = '''
"""GPT-style LM trained with DDP; settings from a YAML file, overridable by flags."""
import argparse
import os

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP


def get_config():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/gpt_large_64gpu.yaml")
    ap.add_argument("--micro_batch_size", type=int, default=None)
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    if args.micro_batch_size is not None:
        cfg["train"]["micro_batch_size"] = args.micro_batch_size
    return cfg


def main():
    cfg = get_config()
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    from transformers import GPT2Config, GPT2LMHeadModel
    mc = cfg["model"]
    model = GPT2LMHeadModel(GPT2Config(n_layer=mc["n_layer"], n_embd=mc["n_embd"], n_head=mc["n_head"],
                                       n_positions=cfg["train"]["seq_len"]))
    model = DDP(model.cuda(), device_ids=[rank])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["train"]["lr"])
    tc = cfg["train"]
    for step in range(tc["max_steps"]):
        for _ in range(tc["grad_accum_steps"]):
            x = torch.randint(0, 50257, (tc["micro_batch_size"], tc["seq_len"]), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=tc["bf16"]):
                loss = model(input_ids=x, labels=x).loss / tc["grad_accum_steps"]
            loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
'''
SMALL_YAML = '''
model:
  n_layer: 12
  n_embd: 768
  n_head: 12
train:
  micro_batch_size: 8
  grad_accum_steps: 2
  seq_len: 1024
  lr: 6.0e-4
  max_steps: 50000
  bf16: true
'''
LARGE_YAML = '''
# production recipe: 8 nodes x 8 GPUs
model:
  n_layer: 36
  n_embd: 1280
  n_head: 20
train:
  micro_batch_size: 4
  grad_accum_steps: 8
  seq_len: 2048
  lr: 2.0e-4
  max_steps: 300000
  bf16: false
'''
RUN_SH = '''
#!/bin/bash
# Launch helper. Usage: NNODES=<n> bash scripts/run.sh
set -e
NNODES=${NNODES:-2}
GPUS_PER_NODE=8
export OMP_NUM_THREADS=8
CONFIG=configs/gpt_small.yaml

echo "launching on $NNODES nodes"
torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE \\
    --rdzv_backend c10d --rdzv_endpoint ${MASTER_ADDR:-localhost}:29500 \\
    train.py --config $CONFIG --micro_batch_size 16
'''
WRAP_FILES = {"train.py": WRAP_TRAIN, "configs/gpt_small.yaml": SMALL_YAML,
              "configs/gpt_large_64gpu.yaml": LARGE_YAML, "scripts/run.sh": RUN_SH}

job("bash_wrapper_default_nodes",
    "bash scripts/run.sh",
    WRAP_FILES,
    notes="the argparse default names the 64-GPU config; the wrapper passes the small one and overrides micro batch",
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=16,
    global_batch_size=512, grad_accum_steps=2, seq_len=1024, train_steps=50000, precision="bf16")

job("bash_wrapper_env_override",
    "NNODES=4 bash scripts/run.sh",
    WRAP_FILES,
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=4, gpus_per_node=8, num_gpus=32, micro_batch_size=16,
    global_batch_size=1024, grad_accum_steps=2, seq_len=1024, train_steps=50000, precision="bf16")

job("trap_unused_large_config",
    "torchrun --nproc_per_node 2 train.py --config configs/gpt_small.yaml",
    {**WRAP_FILES, "README.md": "# LM\nWe train on 256 A100s for three weeks (see configs/gpt_large_64gpu.yaml).\n"},
    notes="README and the argparse default point at the 64-GPU config; the command uses the small one",
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=2, num_gpus=2, micro_batch_size=8,
    global_batch_size=32, grad_accum_steps=2, seq_len=1024, train_steps=50000, precision="bf16")
