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
