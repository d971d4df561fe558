"""GPT-2 family LM. We always run ZeRO-3 with ds_zero3.json (see README)."""
import argparse

import deepspeed
import torch
from transformers import AutoModelForCausalLM

from tokens import token_loader


def get_args():
    parser = argparse.ArgumentParser(description="DeepSpeed LM training")
    parser.add_argument("--model", type=str, default="gpt2")
    parser.add_argument("--seq_len", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def main():
    args = get_args()
    deepspeed.init_distributed()
    model = AutoModelForCausalLM.from_pretrained(args.model)
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model,
                                                   model_parameters=model.parameters(),
                                                   config=args.deepspeed_config)
    loader = token_loader("/data/openwebtext", args.seq_len, engine.train_micro_batch_size_per_gpu())
    for epoch in range(args.epochs):
        for batch in loader:
            batch = batch.to(engine.device)
            loss = engine(input_ids=batch, labels=batch).loss
            engine.backward(loss)
            engine.step()


if __name__ == "__main__":
    main()
