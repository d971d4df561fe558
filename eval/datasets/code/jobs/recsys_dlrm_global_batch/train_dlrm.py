"""DLRM-style click-through-rate model with DDP; --batch-size is the GLOBAL batch, split over ranks."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class DLRM(nn.Module):
    def __init__(self, table_sizes, emb_dim=128):
        super().__init__()
        self.embs = nn.ModuleList(nn.EmbeddingBag(n, emb_dim, mode="sum") for n in table_sizes)
        self.bottom = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, emb_dim))
        self.top = nn.Sequential(nn.Linear(emb_dim * (len(table_sizes) + 1), 1024), nn.ReLU(), nn.Linear(1024, 1))

    def forward(self, dense, sparse):
        feats = [self.bottom(dense)] + [e(s) for e, s in zip(self.embs, sparse)]
        return self.top(torch.cat(feats, 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=32768)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--emb-dim", type=int, default=128)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(DLRM([1_000_000] * 26, args.emb_dim).cuda(), device_ids=[local_rank])
    from criteo import CriteoDataset
    train_loader = torch.utils.data.DataLoader(CriteoDataset("/data/criteo"),
                                               batch_size=args.batch_size // world_size)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for dense, sparse, y in train_loader:
            loss = nn.functional.binary_cross_entropy_with_logits(model(dense.cuda(), sparse), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
