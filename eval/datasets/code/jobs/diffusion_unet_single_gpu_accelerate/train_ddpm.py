"""Unconditional image diffusion (DDPM) with a UNet, Accelerate for mixed precision."""
import argparse

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import DDPMScheduler, UNet2DModel
from torch.utils.data import DataLoader

from flowers import FlowersDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resolution", type=int, default=64)
    ap.add_argument("--train_batch_size", type=int, default=16)
    ap.add_argument("--num_epochs", type=int, default=100)
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--mixed_precision", type=str, default="no", choices=["no", "fp16", "bf16"])
    args = ap.parse_args()
    accelerator = Accelerator(mixed_precision=args.mixed_precision,
                              gradient_accumulation_steps=args.gradient_accumulation_steps)
    model = UNet2DModel(sample_size=args.resolution, in_channels=3, out_channels=3,
                        block_out_channels=(128, 128, 256, 256, 512, 512))
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    dl = DataLoader(FlowersDataset(args.resolution), batch_size=args.train_batch_size, shuffle=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, opt, dl = accelerator.prepare(model, opt, dl)
    for epoch in range(args.num_epochs):
        for clean in dl:
            noise = torch.randn_like(clean)
            t = torch.randint(0, 1000, (clean.shape[0],), device=clean.device)
            with accelerator.accumulate(model):
                pred = model(noise_scheduler.add_noise(clean, noise, t), t).sample
                loss = F.mse_loss(pred, noise)
                accelerator.backward(loss)
                opt.step()
                opt.zero_grad()


if __name__ == "__main__":
    main()
