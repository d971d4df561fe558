"""Plain PyTorch DistributedDataParallel jobs: vision classifiers, a detector and a speech model."""

from .common import job

VISION_DDP = '''
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
'''

job("ddp_resnet50_imagenet",
    "torchrun --nproc_per_node=8 train_imagenet.py --arch resnet50 --batch-size 128 --epochs 90 --amp",
    {"train_imagenet.py": VISION_DDP},
    framework="pytorch", model_family="resnet", model_name="resnet50", params=25.6e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=8, num_gpus=8, micro_batch_size=128,
    global_batch_size=1024, grad_accum_steps=1, epochs=90, precision="fp16")

job("ddp_resnet18_two_nodes",
    "torchrun --nnodes=2 --nproc_per_node=4 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 "
    "train_imagenet.py --arch resnet18 --epochs 120",
    {"train_imagenet.py": VISION_DDP},
    framework="pytorch", model_family="resnet", model_name="resnet18", params=11.7e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=4, num_gpus=8, micro_batch_size=256,
    global_batch_size=2048, grad_accum_steps=1, epochs=120, precision="fp32")

job("ddp_vit_srun",
    "srun -N 4 --ntasks-per-node=8 --gpus-per-node=8 --cpus-per-task=10 torchrun --nnodes 4 --nproc_per_node 8 "
    "--rdzv_backend c10d --rdzv_endpoint $HEAD:29400 train_imagenet.py --arch vit_b_16 -b 64 --epochs 300 --amp",
    {"train_imagenet.py": VISION_DDP},
    framework="pytorch", model_family="vit", model_name="vit-base", params=86.6e6,
    parallelism={"data": "ddp"}, num_nodes=4, gpus_per_node=8, num_gpus=32, micro_batch_size=64,
    global_batch_size=2048, grad_accum_steps=1, epochs=300, precision="fp16")


YOLO = '''
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
'''
YOLO_MODELS = '''
import torch.nn as nn


class YOLOv3(nn.Module):
    """Darknet-53 backbone with three detection heads."""

    def __init__(self, num_classes=80):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.LeakyReLU(0.1))
        self.head = nn.Conv2d(32, 3 * (5 + num_classes), 1)

    def forward(self, x, targets=None):
        return self.head(self.backbone(x)).mean()
'''
YOLO_DATA = '''
import torch


def create_dataloader(path, img_size, batch_size):
    ds = torch.utils.data.TensorDataset(torch.zeros(64, 3, img_size, img_size), torch.zeros(64, 6))
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=8)
'''

job("ddp_yolo_total_batch",
    "python -m torch.distributed.launch --nproc_per_node 4 --master_port 29501 train_yolo.py "
    "--batch-size 128 --epochs 300 --data data/coco.yaml",
    {"train_yolo.py": YOLO, "models.py": YOLO_MODELS, "datasets.py": YOLO_DATA,
     "data/coco.yaml": "train: ../coco/train2017.txt\nval: ../coco/val2017.txt\nnc: 80\n"},
    params=9375, framework="pytorch", model_family="yolo",
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=32,
    global_batch_size=128, grad_accum_steps=1, epochs=300, precision="fp16")

DEEPSPEECH = '''
"""DeepSpeech2-style speech recognition with DDP."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class DeepSpeech2(nn.Module):
    def __init__(self, hidden=1024, layers=5, n_tokens=29):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 32, (41, 11), (2, 2)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20))
        self.rnn = nn.LSTM(32 * 41, hidden, num_layers=layers, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, n_tokens)

    def forward(self, x):
        x = self.conv(x.unsqueeze(1))
        b, c, f, t = x.shape
        out, _ = self.rnn(x.view(b, c * f, t).transpose(1, 2))
        return self.fc(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", default="manifests/librispeech_train.csv")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=70)
    ap.add_argument("--hidden-size", type=int, default=1024)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(DeepSpeech2(hidden=args.hidden_size).cuda(), device_ids=[local_rank])
    from audio_data import SpectrogramDataset
    ds = SpectrogramDataset(args.manifest)
    train_loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size,
                                               sampler=torch.utils.data.DistributedSampler(ds))
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1.5e-4)
    for epoch in range(args.epochs):
        for spect, targets, in_len, tgt_len in train_loader:
            logits = model(spect.cuda()).log_softmax(-1).transpose(0, 1)
            loss = ctc(logits, targets, in_len, tgt_len)
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
'''
job("ddp_deepspeech2_two_nodes",
    "torchrun --nnodes 2 --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint node01:29500 "
    "train_ds2.py --batch-size 24",
    {"train_ds2.py": DEEPSPEECH},
    params=119955677, framework="pytorch", model_family="rnn",
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=4, num_gpus=8, micro_batch_size=24,
    global_batch_size=192, grad_accum_steps=1, epochs=70, precision="fp32")
