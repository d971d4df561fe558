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
