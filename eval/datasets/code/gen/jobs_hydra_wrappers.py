"""Hydra jobs (YAML configs, command-line overrides) and shell wrappers around a YAML-configured trainer."""

from .common import job

HYDRA_TRAIN = '''
"""Lightning GPT training configured with Hydra (conf/config.yaml + model group)."""
import hydra
import lightning as L
import torch
from omegaconf import DictConfig
from torch.utils.data import DataLoader

from gptlib import GPTModule, RandomTokens


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    model = GPTModule(n_layer=cfg.model.n_layer, n_embd=cfg.model.n_embd, vocab_size=cfg.model.vocab_size,
                      lr=cfg.optim.lr)
    loader = DataLoader(RandomTokens(cfg.data.seq_len), batch_size=cfg.data.batch_size, num_workers=4)
    trainer = L.Trainer(accelerator="gpu", devices=cfg.trainer.devices, num_nodes=cfg.trainer.num_nodes,
                        strategy="ddp", precision=cfg.trainer.precision, max_steps=cfg.trainer.max_steps,
                        accumulate_grad_batches=cfg.trainer.accumulate_grad_batches)
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()
'''
GPTLIB = '''
import lightning as L
import torch
from torch import nn


class GPTModule(L.LightningModule):
    def __init__(self, n_layer, n_embd, vocab_size, lr):
        super().__init__()
        layer = nn.TransformerEncoderLayer(n_embd, n_embd // 64, 4 * n_embd, batch_first=True)
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.body = nn.TransformerEncoder(layer, n_layer)
        self.head = nn.Linear(n_embd, vocab_size)
        self.lr = lr

    def training_step(self, batch, _):
        logits = self.head(self.body(self.emb(batch[:, :-1]), is_causal=True))
        return nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, seq_len):
        self.seq_len = seq_len

    def __len__(self):
        return 100000

    def __getitem__(self, i):
        return torch.randint(0, 50257, (self.seq_len + 1,))
'''
HYDRA_CONF = '''
defaults:
  - model: gpt_small
  - _self_

trainer:
  devices: 1
  num_nodes: 1
  precision: bf16-mixed
  max_steps: 100000
  accumulate_grad_batches: 1

data:
  batch_size: 16  # per GPU
  seq_len: 1024

optim:
  lr: 3.0e-4
'''
GPT_SMALL = "n_layer: 12\nn_embd: 768\nvocab_size: 50257\n"
GPT_MEDIUM = "n_layer: 24\nn_embd: 1024\nvocab_size: 50257\n"
HYDRA_FILES = {"train.py": HYDRA_TRAIN, "gptlib.py": GPTLIB, "conf/config.yaml": HYDRA_CONF,
               "conf/model/gpt_small.yaml": GPT_SMALL, "conf/model/gpt_medium.yaml": GPT_MEDIUM}

job("hydra_lightning_gpt_medium",
    "python train.py model=gpt_medium trainer.devices=4 data.seq_len=2048",
    HYDRA_FILES,
    framework="lightning", model_family="gpt", model_name="gpt_medium", params=356e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=16,
    global_batch_size=64, grad_accum_steps=1, seq_len=2048, train_steps=100000, precision="bf16")

job("trap_hydra_command_overrides",
    "srun -N 2 --ntasks-per-node=8 python train.py trainer.devices=8 trainer.num_nodes=2 data.batch_size=64 "
    "trainer.accumulate_grad_batches=2 trainer.precision=16-mixed",
    HYDRA_FILES,
    notes="config says batch 16/bf16 (with a comment); the command overrides batch, accumulation and precision",
    framework="lightning", model_family="gpt", model_name="gpt_small", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=64,
    global_batch_size=2048, grad_accum_steps=2, seq_len=1024, train_steps=100000, precision="fp16")

WRAP_TRAIN = '''
"""GPT-style LM trained with DDP; settings from a YAML file, overridable by flags."""
import argparse
import os

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP


def get_config():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/gpt_large_64gpu.yaml")
    ap.add_argument("--micro_batch_size", type=int, default=None)
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    if args.micro_batch_size is not None:
        cfg["train"]["micro_batch_size"] = args.micro_batch_size
    return cfg


def main():
    cfg = get_config()
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    from transformers import GPT2Config, GPT2LMHeadModel
    mc = cfg["model"]
    model = GPT2LMHeadModel(GPT2Config(n_layer=mc["n_layer"], n_embd=mc["n_embd"], n_head=mc["n_head"],
                                       n_positions=cfg["train"]["seq_len"]))
    model = DDP(model.cuda(), device_ids=[rank])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["train"]["lr"])
    tc = cfg["train"]
    for step in range(tc["max_steps"]):
        for _ in range(tc["grad_accum_steps"]):
            x = torch.randint(0, 50257, (tc["micro_batch_size"], tc["seq_len"]), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=tc["bf16"]):
                loss = model(input_ids=x, labels=x).loss / tc["grad_accum_steps"]
            loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
'''
SMALL_YAML = '''
model:
  n_layer: 12
  n_embd: 768
  n_head: 12
train:
  micro_batch_size: 8
  grad_accum_steps: 2
  seq_len: 1024
  lr: 6.0e-4
  max_steps: 50000
  bf16: true
'''
LARGE_YAML = '''
# production recipe: 8 nodes x 8 GPUs
model:
  n_layer: 36
  n_embd: 1280
  n_head: 20
train:
  micro_batch_size: 4
  grad_accum_steps: 8
  seq_len: 2048
  lr: 2.0e-4
  max_steps: 300000
  bf16: false
'''
RUN_SH = '''
#!/bin/bash
# Launch helper. Usage: NNODES=<n> bash scripts/run.sh
set -e
NNODES=${NNODES:-2}
GPUS_PER_NODE=8
export OMP_NUM_THREADS=8
CONFIG=configs/gpt_small.yaml

echo "launching on $NNODES nodes"
torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE \\
    --rdzv_backend c10d --rdzv_endpoint ${MASTER_ADDR:-localhost}:29500 \\
    train.py --config $CONFIG --micro_batch_size 16
'''
WRAP_FILES = {"train.py": WRAP_TRAIN, "configs/gpt_small.yaml": SMALL_YAML,
              "configs/gpt_large_64gpu.yaml": LARGE_YAML, "scripts/run.sh": RUN_SH}

job("bash_wrapper_default_nodes",
    "bash scripts/run.sh",
    WRAP_FILES,
    notes="the argparse default names the 64-GPU config; the wrapper passes the small one and overrides micro batch",
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=16,
    global_batch_size=512, grad_accum_steps=2, seq_len=1024, train_steps=50000, precision="bf16")

job("bash_wrapper_env_override",
    "NNODES=4 bash scripts/run.sh",
    WRAP_FILES,
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=4, gpus_per_node=8, num_gpus=32, micro_batch_size=16,
    global_batch_size=1024, grad_accum_steps=2, seq_len=1024, train_steps=50000, precision="bf16")

job("trap_unused_large_config",
    "torchrun --nproc_per_node 2 train.py --config configs/gpt_small.yaml",
    {**WRAP_FILES, "README.md": "# LM\nWe train on 256 A100s for three weeks (see configs/gpt_large_64gpu.yaml).\n"},
    notes="README and the argparse default point at the 64-GPU config; the command uses the small one",
    framework="pytorch", model_family="gpt", params=124e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=2, num_gpus=2, micro_batch_size=8,
    global_batch_size=32, grad_accum_steps=2, seq_len=1024, train_steps=50000, precision="bf16")
