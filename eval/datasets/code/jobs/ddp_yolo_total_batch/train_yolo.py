"""Object detection (YOLOv3-style) with torch.distributed.launch; --batch-size is the TOTAL batch."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from models import YOLOv3
from datasets import create_dataloader


def train(opt):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    rank = int(os.environ.get("RANK", -1))
    if rank != -1:
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    batch_size = opt.batch_size // world_size
    model = YOLOv3(num_classes=80).cuda()
    if rank != -1:
        model = DDP(model, device_ids=[int(os.environ["LOCAL_RANK"])])
    loader = create_dataloader(opt.data, opt.img_size, batch_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(opt.epochs):
        for imgs, targets in loader:
            with torch.cuda.amp.autocast():
                loss = model(imgs.cuda(), targets.cuda())
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=str, default="data/coco.yaml")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64, help="total batch size for all GPUs")
    parser.add_argument("--img-size", type=int, default=640)
    train(parser.parse_args())
