"""PyTorch Lightning templates: a LightningModule script and a torchvision data module."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub

_PL_SCRIPT = '''"""<<desc>> with PyTorch Lightning."""
import argparse

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from <<module>> import <<net>>, make_datasets


class LitModel(L.LightningModule):
    def __init__(self, lr: float):
        super().__init__()
        self.save_hyperparameters()
        self.net = <<net>>()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.<<opt>>(self.parameters(), lr=self.hparams.lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--num_nodes", type=int, default=1)
    ap.add_argument("--max_epochs", type=int, default=10)
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()
    train, val = make_datasets()
    trainer = L.Trainer(accelerator="gpu", devices=args.devices, num_nodes=args.num_nodes, strategy="<<strategy>>",
                        max_epochs=args.max_epochs, precision="16-mixed", log_every_n_steps=<<log>>)
    trainer.fit(LitModel(args.lr), DataLoader(train, batch_size=args.batch_size, num_workers=8),
                DataLoader(val, batch_size=args.batch_size, num_workers=8))


if __name__ == "__main__":
    main()
'''

_PL_DATA = '''import torch.nn as nn
import torchvision
import torchvision.transforms as T


def <<net>>():
    return torchvision.models.<<tv>>(num_classes=<<classes>>)


def make_datasets():
    tf = T.Compose([T.RandomResizedCrop(<<img>>), T.ToTensor()])
    return (torchvision.datasets.<<ds>>("/data", <<split_train>>, transform=tf),
            torchvision.datasets.<<ds>>("/data", <<split_val>>, transform=T.ToTensor()))
'''


def _lightning(tv: str, ds: str, classes: int, img: int, desc: str, opt: str = "SGD") -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        strategy = "ddp" if p.num_gpus > 1 else "auto"
        if ds == "CIFAR10":
            split_train, split_val = "train=True, download=False", "train=False"
        else:
            split_train, split_val = 'split="train"', 'split="val"'
        files = {"train.py": _sub(_PL_SCRIPT, desc=desc, module="data", net="build_net", opt=opt,
                                  strategy=strategy, log=p.log_every),
                 "data.py": _sub(_PL_DATA, net="build_net", tv=tv, classes=classes, img=img, ds=ds,
                                 split_train=split_train, split_val=split_val)}
        args = (f"--devices {p.gpus_per_node} --num_nodes {p.nodes} --max_epochs {p.epochs} "
                f"--batch_size {p.micro_batch} --lr {p.lr:g}")
        if p.nodes > 1:
            cmd = (f"srun --nodes {p.nodes} --ntasks-per-node {p.gpus_per_node} --gres=gpu:{p.gpus_per_node} "
                   f"python train.py {args}")
        else:
            cmd = f"python train.py {args}"
        files["command.txt"] = cmd + "\n"
        return files
    return render
