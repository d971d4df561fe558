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
