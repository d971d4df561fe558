"""Plain PyTorch jobs on one GPU or none: a CPU-only MLP, a single-GPU GAN, a size given only in prose."""

from .common import job

CPU_MLP = '''
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
'''
job("cpu_tabular_mlp",
    "python3 train_churn.py --epochs 15",
    {"train_churn.py": CPU_MLP},
    framework="pytorch", model_family="mlp",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=0, num_gpus=0, micro_batch_size=512,
    global_batch_size=512, grad_accum_steps=1, epochs=15, precision="fp32")

CYCLEGAN = '''
"""Unpaired image-to-image translation (CycleGAN) on a single GPU."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from networks import ResnetGenerator, PatchDiscriminator
from unaligned import UnalignedDataset

parser = argparse.ArgumentParser()
parser.add_argument("--dataroot", required=True)
parser.add_argument("--batch_size", type=int, default=1)
parser.add_argument("--n_epochs", type=int, default=100, help="epochs at the initial learning rate")
parser.add_argument("--gpu_ids", type=str, default="0")
opt = parser.parse_args()

device = torch.device("cuda:0")
G_AB, G_BA = ResnetGenerator().to(device), ResnetGenerator().to(device)
D_A, D_B = PatchDiscriminator().to(device), PatchDiscriminator().to(device)
loader = DataLoader(UnalignedDataset(opt.dataroot), batch_size=opt.batch_size, shuffle=True, num_workers=4)
opt_G = torch.optim.Adam(list(G_AB.parameters()) + list(G_BA.parameters()), lr=2e-4, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(list(D_A.parameters()) + list(D_B.parameters()), lr=2e-4, betas=(0.5, 0.999))
l1, mse = nn.L1Loss(), nn.MSELoss()
for epoch in range(opt.n_epochs):
    for real_A, real_B in loader:
        real_A, real_B = real_A.to(device), real_B.to(device)
        fake_B, fake_A = G_AB(real_A), G_BA(real_B)
        loss_G = mse(D_B(fake_B), torch.ones_like(D_B(fake_B))) + 10 * l1(G_BA(fake_B), real_A)
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
'''
NETWORKS = '''
import torch.nn as nn


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=64, n_blocks=9):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, ngf, 7, padding=3), nn.InstanceNorm2d(ngf), nn.ReLU(True),
                                 nn.Conv2d(ngf, 3, 7, padding=3), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class PatchDiscriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ndf, 1, 4, 1, 1))

    def forward(self, x):
        return self.net(x)
'''
job("single_gpu_cyclegan",
    "python train_cyclegan.py --dataroot ./datasets/horse2zebra --n_epochs 200",
    {"train_cyclegan.py": CYCLEGAN, "networks.py": NETWORKS,
     "unaligned.py": "import torch\n\n\nclass UnalignedDataset(torch.utils.data.Dataset):\n    def __init__(self, root):\n        self.root = root\n\n    def __len__(self):\n        return 1000\n\n    def __getitem__(self, i):\n        return torch.zeros(3, 256, 256), torch.zeros(3, 256, 256)\n"},
    framework="pytorch", model_family="gan",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, micro_batch_size=1,
    global_batch_size=1, grad_accum_steps=1, epochs=200, precision="fp32")

PROSE = '''
"""Pre-training script for our 1.3B-parameter decoder-only language model ("Aurora-1.3B").

The model size preset is chosen in presets.json at run time; see the wiki for the data mixture.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from lm import DecoderLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="aurora-1.3b")
    ap.add_argument("--micro_bsz", type=int, default=4)
    ap.add_argument("--seq_len", type=int, default=2048)
    ap.add_argument("--tokens", type=float, default=26e9, help="training budget in tokens")
    args = ap.parse_args()
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dims = json.load(open("presets.json"))[args.preset]
    model = DDP(DecoderLM(**dims).cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    steps = int(args.tokens // (args.micro_bsz * args.seq_len * world))
    for step in range(steps):
        x = torch.randint(0, 50000, (args.micro_bsz, args.seq_len + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
'''
LM_PY = '''
import torch.nn as nn


class DecoderLM(nn.Module):
    def __init__(self, n_layers, d_model, n_heads, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, batch_first=True, norm_first=True)
        self.body = nn.TransformerEncoder(layer, n_layers)
        self.out = nn.Linear(d_model, vocab, bias=False)

    def forward(self, x, y):
        h = self.body(self.emb(x), is_causal=True)
        return nn.functional.cross_entropy(self.out(h).flatten(0, 1), y.flatten())
'''
job("prose_params_custom_lm",
    "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint $MASTER:29500 pretrain.py --micro_bsz 8",
    {"pretrain.py": PROSE, "lm.py": LM_PY,
     "presets.json": '{"aurora-1.3b": {"n_layers": 24, "d_model": 2048, "n_heads": 16, "vocab": 50000},\n'
                     ' "aurora-350m": {"n_layers": 24, "d_model": 1024, "n_heads": 16, "vocab": 50000}}\n'},
    notes="params stated only in prose; train steps computed in code from a token budget",
    framework="pytorch", model_family="gpt", model_name="aurora-1.3b", params=1.3e9,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=8,
    global_batch_size=128, grad_accum_steps=1, seq_len=2048, train_steps=99182, precision="bf16")
