"""Wide ResNet-50-2 on ImageNet, DDP, channels-last, AMP bf16."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--bs", type=int, default=96)
p.add_argument("--epochs", type=int, default=100)
args = p.parse_args()
dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
model = DDP(torchvision.models.wide_resnet50_2().cuda().to(memory_format=torch.channels_last), device_ids=[rank])
train_loader = torch.utils.data.DataLoader(torchvision.datasets.FakeData(transform=torchvision.transforms.ToTensor()),
                                           batch_size=args.bs)
opt = torch.optim.SGD(model.parameters(), lr=0.4)
for epoch in range(args.epochs):
    for x, y in train_loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        loss.backward()
        opt.step()
        opt.zero_grad()
