"""Custom training loop with Hugging Face Accelerate."""
import argparse
import math

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

from lm_data import load_blocks


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", type=str, default="gpt2")
    p.add_argument("--batch_size", type=int, default=4, help="per device")
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--seq_len", type=int, default=512)
    p.add_argument("--num_epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=5e-5)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    model = AutoModelForCausalLM.from_pretrained(args.model_name)
    train_dl = DataLoader(load_blocks("data/train.txt", args.seq_len), batch_size=args.batch_size, shuffle=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    steps = math.ceil(len(train_dl) / args.gradient_accumulation_steps) * args.num_epochs
    sched = get_cosine_schedule_with_warmup(opt, 500, steps)
    model, opt, train_dl, sched = accelerator.prepare(model, opt, train_dl, sched)
    for epoch in range(args.num_epochs):
        model.train()
        for batch in train_dl:
            with accelerator.accumulate(model):
                loss = model(input_ids=batch, labels=batch).loss
                accelerator.backward(loss)
                opt.step()
                sched.step()
                opt.zero_grad()
        accelerator.print(f"epoch {epoch} done")


if __name__ == "__main__":
    main()
