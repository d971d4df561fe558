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
