"""Causal-LM pre-training with PyTorch FSDP (full sharding), bf16 mixed precision."""
import argparse
import functools
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

from data import PackedTokenDataset


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--seq_len", type=int, default=2048)
    p.add_argument("--micro_batch", type=int, default=2)
    p.add_argument("--grad_accum", type=int, default=1)
    p.add_argument("--max_steps", type=int, default=5000)
    p.add_argument("--lr", type=float, default=3e-4)
    return p.parse_args()


def main():
    args = parse()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    config = AutoConfig.from_pretrained(args.model_name)
    model = AutoModelForCausalLM.from_config(config)
    bf16 = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
    wrap = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer})
    model = FSDP(model, auto_wrap_policy=wrap, mixed_precision=bf16,
                 sharding_strategy=ShardingStrategy.FULL_SHARD, device_id=torch.cuda.current_device())
    loader = torch.utils.data.DataLoader(PackedTokenDataset("/data/tokens", args.seq_len),
                                         batch_size=args.micro_batch, num_workers=4)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    step = 0
    for i, batch in enumerate(loader):
        out = model(input_ids=batch.cuda(), labels=batch.cuda())
        (out.loss / args.grad_accum).backward()
        if (i + 1) % args.grad_accum == 0:
            model.clip_grad_norm_(1.0)
            opt.step()
            opt.zero_grad()
            step += 1
            if step >= args.max_steps:
                break


if __name__ == "__main__":
    main()
