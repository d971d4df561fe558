"""OPT-1.3B continued pre-training; the DeepSpeed config is a dict in the script."""
import argparse

import deepspeed
import torch
from transformers import AutoModelForCausalLM

ds_config = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 8,
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 2, "overlap_comm": True},
    "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
}

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--steps", type=int, default=20000)
parser.add_argument("--seq", type=int, default=2048)
args = parser.parse_args()

model = AutoModelForCausalLM.from_pretrained("facebook/opt-1.3b")
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
for step in range(args.steps):
    ids = torch.randint(0, 50272, (4, args.seq), device=engine.device)
    engine.backward(engine(input_ids=ids, labels=ids).loss)
    engine.step()
