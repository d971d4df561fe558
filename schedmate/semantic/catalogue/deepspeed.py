"""DeepSpeed templates: a training script, a ZeRO JSON config and a hostfile across nodes."""

from __future__ import annotations

import json
from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _hostfile, _sub

_DS_TRAIN = '''"""<<desc>> with DeepSpeed (ZeRO stage from the JSON config)."""
import argparse

import deepspeed
import torch
from transformers import AutoConfig, <<auto>>

ap = argparse.ArgumentParser()
ap.add_argument("--model_name", default="<<model>>")
ap.add_argument("--max_steps", type=int, default=1000)
ap.add_argument("--seq_len", type=int, default=<<seq>>)
ap.add_argument("--local_rank", type=int, default=0)
ap.add_argument("--log_every", type=int, default=10)
ap = deepspeed.add_config_arguments(ap)
args = ap.parse_args()

config = AutoConfig.from_pretrained(args.model_name)
model = <<auto>>.from_config(config)
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
step = 0
while step < args.max_steps:
    ids = torch.randint(0, config.vocab_size, (engine.train_micro_batch_size_per_gpu(), args.seq_len),
                        device=engine.device)
    loss = engine(input_ids=ids, labels=ids).loss
    engine.backward(loss)
    engine.step()
    step += 1
    if step % args.log_every == 0 and engine.global_rank == 0:
        print(f"step {step} loss {loss.item():.4f}")
'''


def _ds_config(p: Params, stage: int) -> str:
    cfg: dict = {
        "train_batch_size": p.global_batch,
        "train_micro_batch_size_per_gpu": p.micro_batch,
        "gradient_accumulation_steps": p.grad_accum,
        "gradient_clipping": 1.0,
        "zero_optimization": {"stage": stage, "overlap_comm": True, "contiguous_gradients": True},
        "optimizer": {"type": "AdamW", "params": {"lr": p.lr, "betas": [0.9, 0.95], "weight_decay": 0.1}},
        "steps_per_print": p.log_every,
        "bf16": {"enabled": True},
    }
    if stage == 3:
        cfg["zero_optimization"].update({"stage3_prefetch_bucket_size": 5e8, "stage3_param_persistence_threshold": 1e6})
    return json.dumps(cfg, indent=2) + "\n"


def _deepspeed(model: str, auto: str, stage: int, desc: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        files = {"train_ds.py": _sub(_DS_TRAIN, desc=desc, auto=auto, model=model, seq=p.seq_len),
                 f"configs/zero{stage}.json": _ds_config(p, stage)}
        if p.nodes > 1:
            files["hostfile"] = _hostfile(p)
            launch = f"deepspeed --num_nodes {p.nodes} --num_gpus {p.gpus_per_node} --hostfile hostfile"
        else:
            launch = f"deepspeed --num_gpus {p.num_gpus}"
        files["command.txt"] = (f"{launch} train_ds.py --deepspeed --deepspeed_config configs/zero{stage}.json "
                                f"--model_name {model} --max_steps {p.steps} --seq_len {p.seq_len} "
                                f"--log_every {p.log_every}\n")
        return files
    return render
