"""torchtitan style templates: a Llama-3 trainer driven by a TOML job config."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub

_TITAN_TRAIN = '''"""Llama-3 pre-training from a TOML job config (torchtitan style)."""
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
    ns, _ = ap.parse_known_args()
    with open(ns.config_file, "rb") as f:
        return tomllib.load(f)


def main():
    cfg = load_job_config()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    par = cfg["parallelism"]
    world = dist.get_world_size()
    tp, pp = par["tensor_parallel_degree"], par["pipeline_parallel_degree"]
    dp_shard = par["data_parallel_shard_degree"]
    if dp_shard == -1:
        dp_shard = world // (tp * pp)
    mesh = init_device_mesh("cuda", (pp, dp_shard, tp), mesh_dim_names=("pp", "dp_shard", "tp"))
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

_TITAN_MODEL = '''from dataclasses import dataclass

import torch.nn as nn


@dataclass
class ModelArgs:
    dim: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    vocab_size: int = 128256
    ffn_dim_multiplier: float = 1.3


llama3_configs = {
    "debugmodel": ModelArgs(dim=256, n_layers=6, n_heads=16),
    "8B": ModelArgs(dim=4096, n_layers=32, n_heads=32),
    "70B": ModelArgs(dim=8192, n_layers=80, n_heads=64),
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

_TITAN_TOML = '''[job]
dump_folder = "./outputs"
description = "Llama 3 <<flavor>> training"

[model]
name = "llama3"
flavor = "<<flavor>>"
tokenizer_path = "./assets/tokenizer/original/tokenizer.model"

[optimizer]
name = "AdamW"
lr = <<lr>>

[training]
local_batch_size = <<mbs>>
global_batch_size = <<gbs>>
seq_len = <<seq>>
max_norm = 1.0
steps = <<steps>>
mixed_precision_param = "bfloat16"
dataset = "c4"

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = <<tp>>
pipeline_parallel_degree = <<pp>>
context_parallel_degree = 1

[metrics]
log_freq = <<log>>

[checkpoint]
enable_checkpoint = <<ckpt_on>>
interval = <<ckpt>>
'''


def _titan(flavor: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        toml = _sub(_TITAN_TOML, flavor=flavor, lr=f"{p.lr:.1e}", mbs=p.micro_batch, gbs=p.global_batch,
                    seq=p.seq_len, steps=p.steps, tp=p.tp, pp=p.pp, log=p.log_every,
                    ckpt_on="true" if p.ckpt_every else "false", ckpt=p.ckpt_every or 500)
        name = f"train_configs/llama3_{flavor.lower()}.toml"
        if p.nodes == 1:
            cmd = f"torchrun --nproc_per_node={p.num_gpus} --rdzv_backend c10d --rdzv_endpoint=localhost:0 "
        else:
            cmd = (f"srun --nodes={p.nodes} --ntasks-per-node=1 --gpus-per-node={p.gpus_per_node} torchrun "
                   f"--nnodes {p.nodes} --nproc_per_node {p.gpus_per_node} --rdzv_backend c10d "
                   f"--rdzv_endpoint $HEAD_NODE_IP:29500 ")
        cmd += f"--local-ranks-filter 0 train.py --job.config_file {name}\n"
        return {"train.py": _TITAN_TRAIN, "llama.py": _TITAN_MODEL, name: toml, "command.txt": cmd}
    return render
