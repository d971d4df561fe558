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
