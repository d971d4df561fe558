"""Tabular churn model: a small MLP trained on the CPU (no accelerator on the analytics nodes)."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def build(n_features, hidden):
    return nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Dropout(0.1),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/churn.csv")
    ap.add_argument("--batch_size", type=int, default=512)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=256)
    args = ap.parse_args()
    torch.set_num_threads(8)
    device = torch.device("cpu")
    x = torch.randn(100_000, 64)
    y = (torch.rand(100_000, 1) > 0.8).float()
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)
    model = build(64, args.hidden).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.BCEWithLogitsLoss()
    for epoch in range(args.epochs):
        for xb, yb in loader:
            loss = loss_fn(model(xb.to(device)), yb.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, float(loss))


if __name__ == "__main__":
    main()
