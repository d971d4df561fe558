"""torchtitan-style jobs: a Llama-3 trainer driven by TOML job configs."""

from .common import job

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
