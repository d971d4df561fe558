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
