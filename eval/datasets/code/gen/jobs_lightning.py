"""PyTorch Lightning jobs (DDP under srun and sbatch, DeepSpeed, one GPU, CPU)."""

from .common import job

PL_VIT = '''
"""ViT image classification with PyTorch Lightning."""
import argparse

import lightning as L
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class ViTModule(L.LightningModule):
    def __init__(self, model_name, lr):
        super().__init__()
        self.save_hyperparameters()
        self.net = timm.create_model(model_name, pretrained=False, num_classes=1000)

    def training_step(self, batch, _):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y, label_smoothing=0.1)
        self.log("train/loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="vit_base_patch16_224")
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--gpus", type=int, default=8)
    args = ap.parse_args()
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_loader = DataLoader(datasets.ImageFolder("/data/imagenet/train", tf), batch_size=args.batch_size,
                              num_workers=12, shuffle=True)
    trainer = L.Trainer(accelerator="gpu", devices=args.gpus, num_nodes=args.nodes, strategy="ddp",
                        precision="16-mixed", max_epochs=args.epochs)
    trainer.fit(ViTModule(args.model, 1e-3), train_loader)


if __name__ == "__main__":
    main()
'''
job("lightning_vit_ddp_srun",
    "srun --nodes 2 --ntasks-per-node 8 --gres=gpu:8 python train_vit_pl.py --nodes 2 --gpus 8 --batch_size 96",
    {"train_vit_pl.py": PL_VIT},
    framework="lightning", model_family="vit", model_name="vit-base", params=86.6e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=96,
    global_batch_size=1536, grad_accum_steps=1, epochs=300, precision="fp16")

job("sbatch_lightning_vit_large",
    "sbatch submit.sh",
    {"train_vit_pl.py": PL_VIT, "submit.sh": '''
#!/bin/bash
#SBATCH -J vit-l
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=16

module load cuda/12.1
source ~/envs/vision/bin/activate
srun python train_vit_pl.py --model vit_large_patch16_224 --nodes $SLURM_NNODES --gpus 4 --batch_size 64 --epochs 90
'''},
    framework="lightning", model_family="vit", model_name="vit-large", params=304e6,
    parallelism={"data": "ddp"}, num_nodes=4, gpus_per_node=4, num_gpus=16, micro_batch_size=64,
    global_batch_size=1024, grad_accum_steps=1, epochs=90, precision="fp16")

PL_GPT_DS = '''
"""GPT-2 large language model with Lightning + DeepSpeed ZeRO stage 3."""
import argparse

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader
from transformers import GPT2LMHeadModel

from corpus import TokenBlocks


class LitGPT(pl.LightningModule):
    def __init__(self, name, lr=1.5e-4):
        super().__init__()
        self.model = GPT2LMHeadModel.from_pretrained(name)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        return self.model(input_ids=batch, labels=batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2-large")
    ap.add_argument("--micro_batch", type=int, default=4)
    ap.add_argument("--block", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=50000)
    args = ap.parse_args()
    dl = DataLoader(TokenBlocks("/data/c4", args.block), batch_size=args.micro_batch, num_workers=8)
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="deepspeed_stage_3", precision="bf16-mixed",
                         max_steps=args.steps, accumulate_grad_batches=4, gradient_clip_val=1.0)
    trainer.fit(LitGPT(args.model), dl)
'''
job("lightning_gpt2_large_deepspeed3",
    "python train_lit_gpt.py --steps 30000",
    {"train_lit_gpt.py": PL_GPT_DS,
     "corpus.py": "import torch\n\n\nclass TokenBlocks(torch.utils.data.Dataset):\n    def __init__(self, path, block):\n        self.block = block\n\n    def __len__(self):\n        return 10 ** 6\n\n    def __getitem__(self, i):\n        return torch.zeros(self.block, dtype=torch.long)\n"},
    framework="lightning", model_family="gpt", model_name="gpt2-large", params=774e6,
    parallelism={"data": "zero", "zero_stage": 3}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=4,
    global_batch_size=64, grad_accum_steps=4, seq_len=1024, train_steps=30000, precision="bf16")

PL_SMALL = '''
"""ResNet-18 on CIFAR-10 with Lightning: one GPU, full precision."""
import lightning.pytorch as pl
import torch
import torchvision
from torch import nn
from torch.utils.data import DataLoader

BATCH_SIZE = 256
MAX_EPOCHS = 30


class CifarResNet(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = torchvision.models.resnet18(num_classes=10)
        self.model.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


if __name__ == "__main__":
    train = torchvision.datasets.CIFAR10("data", train=True, download=False,
                                         transform=torchvision.transforms.ToTensor())
    loader = DataLoader(train, batch_size=BATCH_SIZE, shuffle=True, num_workers=4)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=MAX_EPOCHS)
    trainer.fit(CifarResNet(), loader)
'''
job("lightning_resnet18_single_gpu",
    "python cifar_pl.py",
    {"cifar_pl.py": PL_SMALL},
    framework="lightning", model_family="resnet", model_name="resnet18", params=11.7e6,
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, micro_batch_size=256,
    global_batch_size=256, grad_accum_steps=1, epochs=30, precision="fp32")

PL_CPU = '''
"""Lightning MLP for sensor anomaly scores: trained on CPU workers."""
import argparse

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class AnomalyMLP(L.LightningModule):
    def __init__(self, n_in=32, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_in))

    def training_step(self, batch, _):
        (x,) = batch
        return nn.functional.mse_loss(self.net(x), x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch_size", type=int, default=1024)
    a = ap.parse_args()
    dl = DataLoader(TensorDataset(torch.randn(200_000, 32)), batch_size=a.batch_size)
    L.Trainer(accelerator="cpu", devices=1, max_epochs=a.epochs).fit(AnomalyMLP(), dl)
'''
job("lightning_cpu_autoencoder",
    "python anomaly.py --epochs 25",
    {"anomaly.py": PL_CPU},
    framework="lightning", model_family="mlp",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=0, num_gpus=0, micro_batch_size=1024,
    global_batch_size=1024, grad_accum_steps=1, epochs=25, precision="fp32")
