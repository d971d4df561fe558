"""Semantic segmentation (DeepLab-style CNN) with torch.multiprocessing.spawn, one process per GPU."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

CFG = {"epochs": 50, "batch_size": 8, "lr": 0.007, "crop": 513}


class SegNet(nn.Module):
    def __init__(self, n_classes=21):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1))
        self.head = nn.Conv2d(128, n_classes, 1)

    def forward(self, x):
        return self.head(self.enc(x))


def worker(rank, world_size, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(SegNet().cuda(rank), device_ids=[rank])
    ds = torch.utils.data.TensorDataset(torch.zeros(64, 3, CFG["crop"], CFG["crop"]), torch.zeros(64, 513, 513).long())
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=world_size, rank=rank)
    loader = torch.utils.data.DataLoader(ds, batch_size=CFG["batch_size"], sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=CFG["lr"], momentum=0.9)
    for epoch in range(CFG["epochs"]):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(rank)), y.cuda(rank))
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=2)
    args = ap.parse_args()
    mp.spawn(worker, args=(args.gpus, args), nprocs=args.gpus, join=True)
