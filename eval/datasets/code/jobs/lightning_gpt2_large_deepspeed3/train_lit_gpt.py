"""GPT-2 large language model with Lightning + DeepSpeed ZeRO stage 3."""
import argparse

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader
from transformers import GPT2LMHeadModel

from corpus import TokenBlocks


class LitGPT(pl.LightningModule):
    def __init__(self, name, lr=1.5e-4):
        super().__init__()
        self.model = GPT2LMHeadModel.from_pretrained(name)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        return self.model(input_ids=batch, labels=batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2-large")
    ap.add_argument("--micro_batch", type=int, default=4)
    ap.add_argument("--block", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=50000)
    args = ap.parse_args()
    dl = DataLoader(TokenBlocks("/data/c4", args.block), batch_size=args.micro_batch, num_workers=8)
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="deepspeed_stage_3", precision="bf16-mixed",
                         max_steps=args.steps, accumulate_grad_batches=4, gradient_clip_val=1.0)
    trainer.fit(LitGPT(args.model), dl)
