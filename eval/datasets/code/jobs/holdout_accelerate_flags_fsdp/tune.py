"""Llama-3 8B instruction tuning with a custom Accelerate loop."""
import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM

ap = argparse.ArgumentParser()
ap.add_argument("--batch_size", type=int, default=1)
ap.add_argument("--max_len", type=int, default=4096)
ap.add_argument("--epochs", type=int, default=3)
a = ap.parse_args()
acc = Accelerator()
model = AutoModelForCausalLM.from_pretrained("meta-llama/Meta-Llama-3-8B")
data = torch.utils.data.DataLoader(torch.zeros(1000, a.max_len, dtype=torch.long), batch_size=a.batch_size)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
model, opt, data = acc.prepare(model, opt, data)
for epoch in range(a.epochs):
    for batch in data:
        acc.backward(model(input_ids=batch, labels=batch).loss)
        opt.step()
        opt.zero_grad()
