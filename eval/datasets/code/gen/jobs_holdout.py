"""Hold-out jobs: written and labelled after the static pass was finished, scored once before any fix.

Their first score is recorded in the report; the analyzer was NOT tuned on them beforehand.
"""

from .common import job

SPAWN = '''
"""Semantic segmentation (DeepLab-style CNN) with torch.multiprocessing.spawn, one process per GPU."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

CFG = {"epochs": 50, "batch_size": 8, "lr": 0.007, "crop": 513}


class SegNet(nn.Module):
    def __init__(self, n_classes=21):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1))
        self.head = nn.Conv2d(128, n_classes, 1)

    def forward(self, x):
        return self.head(self.enc(x))


def worker(rank, world_size, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(SegNet().cuda(rank), device_ids=[rank])
    ds = torch.utils.data.TensorDataset(torch.zeros(64, 3, CFG["crop"], CFG["crop"]), torch.zeros(64, 513, 513).long())
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=world_size, rank=rank)
    loader = torch.utils.data.DataLoader(ds, batch_size=CFG["batch_size"], sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=CFG["lr"], momentum=0.9)
    for epoch in range(CFG["epochs"]):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(rank)), y.cuda(rank))
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=2)
    args = ap.parse_args()
    mp.spawn(worker, args=(args.gpus, args), nprocs=args.gpus, join=True)
'''
job("holdout_mp_spawn_segmentation", "python seg_train.py --gpus 4", {"seg_train.py": SPAWN},
    params=78357, framework="pytorch", model_family="cnn",
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=8,
    global_batch_size=32, grad_accum_steps=1, epochs=50, precision="fp32")

HF_INLINE = '''
"""DistilBERT sentiment fine-tuning; TrainingArguments fixed in code."""
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

MODEL = "distilbert-base-uncased"
tok = AutoTokenizer.from_pretrained(MODEL)
ds = load_dataset("imdb").map(lambda b: tok(b["text"], truncation=True, max_length=256), batched=True)
model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=2)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=16, gradient_accumulation_steps=4,
                         num_train_epochs=2, bf16=True, learning_rate=5e-5, logging_steps=50)
Trainer(model=model, args=args, train_dataset=ds["train"], tokenizer=tok).train()
'''
job("holdout_hf_inline_training_arguments", "torchrun --nproc_per_node 2 finetune.py", {"finetune.py": HF_INLINE},
    framework="hf-trainer", model_family="bert", model_name="distilbert-base-uncased", params=66e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=2, num_gpus=2, micro_batch_size=16,
    global_batch_size=128, grad_accum_steps=4, seq_len=256, epochs=2, precision="bf16")

DS_DICT = '''
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
'''
job("holdout_deepspeed_dict_config", "deepspeed --num_gpus 8 cont_pretrain.py --steps 30000",
    {"cont_pretrain.py": DS_DICT},
    framework="deepspeed", model_family="gpt", model_name="opt-1.3b", params=1.3e9,
    parallelism={"data": "zero", "zero_stage": 2}, num_nodes=1, gpus_per_node=8, num_gpus=8, micro_batch_size=4,
    global_batch_size=256, grad_accum_steps=8, seq_len=2048, train_steps=30000, precision="bf16")

ACC_FLAGS = '''
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
'''
job("holdout_accelerate_flags_fsdp",
    "accelerate launch --num_machines 2 --num_processes 16 --use_fsdp --mixed_precision bf16 "
    "--machine_rank $RANK --main_process_ip $MASTER tune.py --batch_size 2",
    {"tune.py": ACC_FLAGS},
    framework="accelerate", model_family="llama", model_name="llama3-8b", params=8.0e9,
    parallelism={"data": "fsdp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=2,
    global_batch_size=32, grad_accum_steps=1, seq_len=4096, epochs=3, precision="bf16")

ENV_NGPU = '''
"""Wide ResNet-50-2 on ImageNet, DDP, channels-last, AMP bf16."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--bs", type=int, default=96)
p.add_argument("--epochs", type=int, default=100)
args = p.parse_args()
dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
model = DDP(torchvision.models.wide_resnet50_2().cuda().to(memory_format=torch.channels_last), device_ids=[rank])
train_loader = torch.utils.data.DataLoader(torchvision.datasets.FakeData(transform=torchvision.transforms.ToTensor()),
                                           batch_size=args.bs)
opt = torch.optim.SGD(model.parameters(), lr=0.4)
for epoch in range(args.epochs):
    for x, y in train_loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        loss.backward()
        opt.step()
        opt.zero_grad()
'''
job("holdout_env_gpu_count", "torchrun --nnodes $NNODES --nproc_per_node $NGPU train_wrn.py --epochs 90",
    {"train_wrn.py": ENV_NGPU}, env={"NGPU": "4", "NNODES": "2"},
    framework="pytorch", model_family="resnet", model_name="wide_resnet50_2", params=68.9e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=4, num_gpus=8, micro_batch_size=96,
    global_batch_size=768, grad_accum_steps=1, epochs=90, precision="bf16")
