"""Neural collaborative filtering (NeuMF) on MovieLens, one GPU, bf16 autocast."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from movielens import RatingsDataset


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, mf_dim=64, mlp_layers=(256, 128, 64)):
        super().__init__()
        self.mf_u, self.mf_i = nn.Embedding(n_users, mf_dim), nn.Embedding(n_items, mf_dim)
        self.mlp_u, self.mlp_i = nn.Embedding(n_users, mlp_layers[0] // 2), nn.Embedding(n_items, mlp_layers[0] // 2)
        self.mlp = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU())
        self.out = nn.Linear(mf_dim + 64, 1)

    def forward(self, u, i):
        mf = self.mf_u(u) * self.mf_i(i)
        mlp = self.mlp(torch.cat([self.mlp_u(u), self.mlp_i(i)], -1))
        return self.out(torch.cat([mf, mlp], -1)).squeeze(-1)


parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=65536)
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--lr", type=float, default=0.0045)
args = parser.parse_args()

ds = RatingsDataset("data/ml-20m")
loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8)
model = NeuMF(ds.n_users, ds.n_items).cuda()
opt = torch.optim.Adam(model.parameters(), lr=args.lr)
for epoch in range(args.epochs):
    for u, i, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = nn.functional.binary_cross_entropy_with_logits(model(u.cuda(), i.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
