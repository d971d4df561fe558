"""Image classification with DistributedDataParallel (one process per GPU)."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


def get_args():
    p = argparse.ArgumentParser(description="ImageNet-style training")
    p.add_argument("--data", default="/datasets/imagenet", help="dataset root")
    p.add_argument("--arch", default="resnet50", help="torchvision architecture")
    p.add_argument("-b", "--batch-size", type=int, default=256, help="images per GPU")
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true", help="mixed precision with a grad scaler")
    return p.parse_args()


def main():
    args = get_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    model = getattr(torchvision.models, args.arch)(num_classes=1000).cuda()
    model = DDP(model, device_ids=[local_rank])
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = datasets.ImageFolder(os.path.join(args.data, "train"), tf)
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              num_workers=args.workers, pin_memory=True)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        t0 = time.time()
        for images, target in train_loader:
            images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
                loss = loss_fn(model(images), target)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.3f} time {time.time() - t0:.1f}s")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
