"""Pre-training script for our 1.3B-parameter decoder-only language model ("Aurora-1.3B").

The model size preset is chosen in presets.json at run time; see the wiki for the data mixture.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from lm import DecoderLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="aurora-1.3b")
    ap.add_argument("--micro_bsz", type=int, default=4)
    ap.add_argument("--seq_len", type=int, default=2048)
    ap.add_argument("--tokens", type=float, default=26e9, help="training budget in tokens")
    args = ap.parse_args()
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dims = json.load(open("presets.json"))[args.preset]
    model = DDP(DecoderLM(**dims).cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    steps = int(args.tokens // (args.micro_bsz * args.seq_len * world))
    for step in range(steps):
        x = torch.randint(0, 50000, (args.micro_bsz, args.seq_len + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
