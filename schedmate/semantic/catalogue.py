"""The job-template catalogue: launch command, training script and configs per template, written by us
in the styles of real frameworks (no code copied from public projects), parameterised by model size,
batch, steps, parallelism and GPUs/nodes.

A `Template` says which workload class of `schedmate.workloads` it is (so `Job.spread_slowdown`
agrees with the code), which job kinds it serves (`pretrain`, `sft`, `mllm`, `eval`, `debug`,
`train`), which GPU counts it can run on, its log style (`schedmate.semantic.logs`) and its nominal
iteration time. `render(params)` returns the workdir files (path -> text), `command.txt` included.
Scripts are compact, never executed, and carry no instructions to any reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from schedmate.workloads import CATALOGUE

KINDS = ("pretrain", "sft", "mllm", "eval", "debug", "train")


@dataclass(frozen=True)
class Params:
    """What varies between two jobs of one template."""

    num_gpus: int
    nodes: int = 1
    gpus_per_node: int = 1
    steps: int = 1000
    """Configured optimizer steps (for per-epoch templates: epochs x steps_per_epoch)."""
    epochs: int | None = None
    """Per-epoch templates only: configured epochs."""
    steps_per_epoch: int | None = None
    micro_batch: int = 8
    grad_accum: int = 1
    lr: float = 3e-4
    seq_len: int = 1024
    tp: int = 1
    pp: int = 1
    log_every: int = 10
    eval_every: int = 0
    """Steps between evaluations (0: none)."""
    ckpt_every: int = 0
    seed: int = 0
    variant: int = 0
    """0 for a first submission, k for the user's k-th edit of it."""
    arch: str = "resnet50"
    """Catch-all template only: the torchvision model named on its command line."""

    @property
    def dp(self) -> int:
        return max(1, self.num_gpus // max(1, self.tp * self.pp))

    @property
    def global_batch(self) -> int:
        return self.micro_batch * self.grad_accum * self.dp


@dataclass(frozen=True)
class Template:
    name: str
    workload: str | None
    """Catalogue class of `schedmate.workloads`; None for the catch-all (takes the job's class) and the
    CPU-only template (nothing to spread)."""
    kinds: frozenset[str]
    style: str
    """Log style written by `schedmate.semantic.logs` (hf, lightning, megatron, deepspeed, mmengine,
    fairseq, timm, nanogpt, torchtitan, custom)."""
    framework: str
    model: str
    family: str
    params_b: float
    """Model size in billions of parameters (documentation)."""
    iter_s: float
    """Nominal seconds per optimizer step on a consolidated placement (before fitting to the runtime)."""
    render: Callable[[Params], dict[str, str]]
    fits: Callable[[int], bool]
    per_epoch: bool = False
    log_every: int = 10
    micro_batch: int = 8
    seq_len: int = 1024
    tp: int = 1
    pp: int = 1
    lr: float = 3e-4
    steps_per_epoch: int = 500
    """Per-epoch templates: steps per epoch on 8 GPUs (scaled by 8 / GPUs, the dataset is fixed)."""

    def expected(self, p: Params) -> dict[str, int | None]:
        """What the code analyzer's static pass should read from a rendered workdir."""
        return {
            "num_gpus": p.num_gpus,
            "num_nodes": p.nodes if p.num_gpus == 0 or layout(p.num_gpus) is not None else None,
            "train_steps": None if self.per_epoch else p.steps,
            "epochs": p.epochs if self.per_epoch else None,
        }


# ----------------------------------------------------------------------------- helpers
def _sub(text: str, **kw: object) -> str:
    for k, v in kw.items():
        text = text.replace(f"<<{k}>>", str(v))
    if "<<" in text and ">>" in text.split("<<", 1)[1]:
        raise ValueError(f"unfilled placeholder in template text: {text.split('<<', 1)[1][:40]!r}")
    return text


def layout(gpus: int, max_per_node: int = 8) -> tuple[int, int] | None:
    """(nodes, GPUs per node) for `gpus` GPUs with equal nodes, or None (e.g. 11 GPUs)."""
    if gpus <= max_per_node:
        return 1, max(gpus, 1)
    for per in range(max_per_node, 1, -1):
        if gpus % per == 0:
            return gpus // per, per
    return None


def _any(g: int) -> bool:
    return g >= 1 and layout(g) is not None


def _one(g: int) -> bool:
    return g == 1


def _node_multiple(mult: int, lo: int = 1) -> Callable[[int], bool]:
    """GPU counts `lo..8` divisible by `mult`, or whole 8-GPU nodes divisible by `mult`."""
    def fits(g: int) -> bool:
        if g < lo or g % mult:
            return False
        return g <= 8 or g % 8 == 0
    return fits


def _between(lo: int, hi: int) -> Callable[[int], bool]:
    return lambda g: lo <= g <= hi and layout(g) is not None


def torchrun(p: Params, script: str, single: str = "python") -> str:
    """The launch prefix: plain python on one GPU, torchrun on one node, multi-node torchrun beyond."""
    if p.num_gpus == 1:
        return f"{single} {script}"
    if p.nodes == 1:
        return f"torchrun --standalone --nproc_per_node={p.num_gpus} {script}"
    return (f"torchrun --nnodes {p.nodes} --nproc_per_node {p.gpus_per_node} --rdzv_backend c10d "
            f"--rdzv_endpoint $MASTER_ADDR:29500 {script}")


def _hostfile(p: Params) -> str:
    return "".join(f"worker-{i} slots={p.gpus_per_node}\n" for i in range(p.nodes))


# ----------------------------------------------------------------------------- Megatron
_MEGATRON_ENTRY = '''"""<<what>> pre-training entry point (Megatron-LM style)."""
from functools import partial

import torch

from megatron.core.enums import ModelType
from megatron.training import get_args, pretrain, print_rank_0
from megatron.core.models.<<mod>> import <<cls>>


def model_provider(pre_process=True, post_process=True):
    args = get_args()
    print_rank_0("building <<what>> model ...")
    return <<cls>>(config=args, transformer_layer_spec=None, vocab_size=args.padded_vocab_size,
                   max_sequence_length=args.max_position_embeddings, pre_process=pre_process,
                   post_process=post_process)


def forward_step(data_iterator, model):
    tokens, labels, loss_mask = next(data_iterator)
    output = model(tokens, labels=labels)
    return output, partial(torch.mean)


if __name__ == "__main__":
    pretrain(None, model_provider, ModelType.encoder_or_decoder, forward_step)
'''

_MEGATRON_SH = '''#!/bin/bash
# <<desc>>
set -euo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=<<gpn>>
NNODES=<<nodes>>
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=6000
DATA_PATH=<<data>>
CHECKPOINT_PATH=/ckpt/<<run>>

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK \\
    --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

MODEL_ARGS=(
    --tensor-model-parallel-size <<tp>>
    --pipeline-model-parallel-size <<pp>>
    --num-layers <<layers>>
    --hidden-size <<hidden>>
    --num-attention-heads <<heads>>
    --seq-length <<seq>>
    --max-position-embeddings <<seq>>
    --micro-batch-size <<mbs>>
    --global-batch-size <<gbs>>
    --lr <<lr>>
    --train-iters <<steps>>
    --lr-decay-style cosine
    --bf16
)

torchrun $DISTRIBUTED_ARGS <<entry>> \\
    "${MODEL_ARGS[@]}" \\
    --data-path $DATA_PATH <<tok>> \\
    --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH \\
    --log-interval <<log>> --save-interval <<ckpt>> --eval-interval <<eval>> --eval-iters 10
'''


def _megatron(layers: int, hidden: int, heads: int, bert: bool = False, desc: str = "") -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        entry = "pretrain_bert.py" if bert else "pretrain_gpt.py"
        tok = ("--vocab-file bert-large-uncased-vocab.txt" if bert
               else "--vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt")
        sh = _sub(_MEGATRON_SH, desc=desc or f"{layers}-layer model on {p.num_gpus} GPUs (TP={p.tp}, PP={p.pp})",
                  gpn=p.gpus_per_node, nodes=p.nodes, data="/data/wiki/wiki_text_sentence" if bert
                  else "/data/pile/pile_text_document", run=f"run{p.seed % 1000}", tp=p.tp, pp=p.pp,
                  layers=layers, hidden=hidden, heads=heads, seq=p.seq_len, mbs=p.micro_batch, gbs=p.global_batch,
                  lr=f"{p.lr:.1e}", steps=p.steps, entry=entry, tok=tok, log=p.log_every,
                  ckpt=p.ckpt_every or 1000, eval=p.eval_every or 1000)
        what = "BERT" if bert else "GPT"
        py = _sub(_MEGATRON_ENTRY, what=what, mod="bert" if bert else "gpt", cls="BertModel" if bert else "GPTModel")
        return {"examples/train.sh": sh, entry: py, "command.txt": "bash examples/train.sh\n"}
    return render


def _megatron_fits(tp: int, pp: int) -> Callable[[int], bool]:
    def fits(g: int) -> bool:
        if g < tp * pp or g % (tp * pp):
            return False
        return g <= 8 or g % 8 == 0
    return fits


# ----------------------------------------------------------------------------- torchtitan
_TITAN_TRAIN = '''"""Llama-3 pre-training from a TOML job config (torchtitan style)."""
import argparse
import os
import tomllib

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

from llama import Transformer, llama3_configs


def load_job_config():
    ap = argparse.ArgumentParser()
    ap.add_argument("--job.config_file", dest="config_file", required=True)
    ns, _ = ap.parse_known_args()
    with open(ns.config_file, "rb") as f:
        return tomllib.load(f)


def main():
    cfg = load_job_config()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    par = cfg["parallelism"]
    world = dist.get_world_size()
    tp, pp = par["tensor_parallel_degree"], par["pipeline_parallel_degree"]
    dp_shard = par["data_parallel_shard_degree"]
    if dp_shard == -1:
        dp_shard = world // (tp * pp)
    mesh = init_device_mesh("cuda", (pp, dp_shard, tp), mesh_dim_names=("pp", "dp_shard", "tp"))
    model = Transformer(llama3_configs[cfg["model"]["flavor"]]).cuda()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers:
        fully_shard(block, mesh=mesh["dp_shard"], mp_policy=mp)
    fully_shard(model, mesh=mesh["dp_shard"], mp_policy=mp)
    tr = cfg["training"]
    accum = tr["global_batch_size"] // (tr["local_batch_size"] * dp_shard)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["optimizer"]["lr"])
    for step in range(tr["steps"]):
        for _ in range(accum):
            x = torch.randint(0, 128256, (tr["local_batch_size"], tr["seq_len"]), device="cuda")
            loss = model(x).float().mean() / accum
            loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
'''

_TITAN_MODEL = '''from dataclasses import dataclass

import torch.nn as nn


@dataclass
class ModelArgs:
    dim: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    vocab_size: int = 128256
    ffn_dim_multiplier: float = 1.3


llama3_configs = {
    "debugmodel": ModelArgs(dim=256, n_layers=6, n_heads=16),
    "8B": ModelArgs(dim=4096, n_layers=32, n_heads=32),
    "70B": ModelArgs(dim=8192, n_layers=80, n_heads=64),
}


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(args.dim, args.n_heads) for _ in range(args.n_layers))
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(h)
'''

_TITAN_TOML = '''[job]
dump_folder = "./outputs"
description = "Llama 3 <<flavor>> training"

[model]
name = "llama3"
flavor = "<<flavor>>"
tokenizer_path = "./assets/tokenizer/original/tokenizer.model"

[optimizer]
name = "AdamW"
lr = <<lr>>

[training]
local_batch_size = <<mbs>>
global_batch_size = <<gbs>>
seq_len = <<seq>>
max_norm = 1.0
steps = <<steps>>
mixed_precision_param = "bfloat16"
dataset = "c4"

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = <<tp>>
pipeline_parallel_degree = <<pp>>
context_parallel_degree = 1

[metrics]
log_freq = <<log>>

[checkpoint]
enable_checkpoint = <<ckpt_on>>
interval = <<ckpt>>
'''


def _titan(flavor: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        toml = _sub(_TITAN_TOML, flavor=flavor, lr=f"{p.lr:.1e}", mbs=p.micro_batch, gbs=p.global_batch,
                    seq=p.seq_len, steps=p.steps, tp=p.tp, pp=p.pp, log=p.log_every,
                    ckpt_on="true" if p.ckpt_every else "false", ckpt=p.ckpt_every or 500)
        name = f"train_configs/llama3_{flavor.lower()}.toml"
        if p.nodes == 1:
            cmd = f"torchrun --nproc_per_node={p.num_gpus} --rdzv_backend c10d --rdzv_endpoint=localhost:0 "
        else:
            cmd = (f"srun --nodes={p.nodes} --ntasks-per-node=1 --gpus-per-node={p.gpus_per_node} torchrun "
                   f"--nnodes {p.nodes} --nproc_per_node {p.gpus_per_node} --rdzv_backend c10d "
                   f"--rdzv_endpoint $HEAD_NODE_IP:29500 ")
        cmd += f"--local-ranks-filter 0 train.py --job.config_file {name}\n"
        return {"train.py": _TITAN_TRAIN, "llama.py": _TITAN_MODEL, name: toml, "command.txt": cmd}
    return render


# ----------------------------------------------------------------------------- nanoGPT
_NANO_TRAIN = '''"""Small GPT trainer (nanoGPT style): globals, a config file, then --key=value overrides."""
import math
import os
import time

import torch
from torch.distributed import init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import GPT, GPTConfig

out_dir = "out"
eval_interval = 2000
log_interval = 1
eval_iters = 200
init_from = "scratch"
dataset = "openwebtext"
gradient_accumulation_steps = 40
batch_size = 12
block_size = 1024
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
learning_rate = 6e-4
max_iters = 600000
dtype = "bfloat16"
compile = True
exec(open("configurator.py").read())  # noqa: S102 - overrides from the config file / command line

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="nccl")
    gradient_accumulation_steps //= int(os.environ["WORLD_SIZE"])
model = GPT(GPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, dropout=dropout))
model.to("cuda")
if ddp:
    model = DDP(model, device_ids=[int(os.environ["LOCAL_RANK"])])
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
iter_num = 0
while iter_num <= max_iters:
    for micro_step in range(gradient_accumulation_steps):
        x = torch.randint(0, 50304, (batch_size, block_size), device="cuda")
        logits, loss = model(x, x)
        (loss / gradient_accumulation_steps).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
'''

_NANO_CONFIGURATOR = '''"""Overrides: `python train.py config/x.py --batch_size=32` (file first, then --key=value)."""
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        exec(open(arg).read())  # noqa: S102
    else:
        key, val = arg[2:].split("=", 1)
        try:
            globals()[key] = literal_eval(val)
        except (SyntaxError, ValueError):
            globals()[key] = val
'''

_NANO_MODEL = '''from dataclasses import dataclass

import torch.nn as nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.h = nn.ModuleList(nn.TransformerEncoderLayer(config.n_embd, config.n_head) for _ in range(config.n_layer))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        x = self.wte(idx)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
'''

_NANO_CONFIG = '''# <<desc>>
wandb_log = False
dataset = "<<dataset>>"
init_from = "<<init>>"
batch_size = <<mbs>>
block_size = <<seq>>
gradient_accumulation_steps = <<accum>>
n_layer = <<layers>>
n_head = <<heads>>
n_embd = <<embd>>
learning_rate = <<lr>>
max_iters = <<steps>>
lr_decay_iters = <<steps>>
eval_interval = <<eval>>
log_interval = <<log>>
'''


def _nanogpt(cfg: str, layers: int, heads: int, embd: int, dataset: str, init: str = "scratch") -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        # nanoGPT divides the accumulation by the world size, so the file holds accum x world.
        conf = _sub(_NANO_CONFIG, desc=f"{cfg}: {layers} layers, {embd} wide, {p.num_gpus} GPU(s)", dataset=dataset,
                    init=init, mbs=p.micro_batch, seq=p.seq_len, accum=p.grad_accum * p.num_gpus, layers=layers,
                    heads=heads, embd=embd, lr=f"{p.lr:.1e}", steps=p.steps, eval=p.eval_every or 2000,
                    log=p.log_every)
        cmd = torchrun(p, f"train.py config/{cfg}.py")
        if p.variant:
            cmd += f" --learning_rate={p.lr:.1e}"
        return {"train.py": _NANO_TRAIN, "configurator.py": _NANO_CONFIGURATOR, "model.py": _NANO_MODEL,
                f"config/{cfg}.py": conf, "command.txt": cmd + "\n"}
    return render


# ----------------------------------------------------------------------------- DeepSpeed
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


# ----------------------------------------------------------------------------- HF Trainer
_HF_SCRIPT = '''"""<<desc>> with the Hugging Face Trainer; arguments come from the command line."""
from dataclasses import dataclass, field

from datasets import load_dataset
from transformers import (AutoModelFor<<head>>, AutoTokenizer, HfArgumentParser, Trainer,
                          TrainingArguments)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="<<model>>")
    max_seq_length: int = field(default=<<seq>>)
    dataset_name: str = field(default="<<dataset>>")


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    margs, targs = parser.parse_args_into_dataclasses()
    tok = AutoTokenizer.from_pretrained(margs.model_name_or_path)
    raw = load_dataset(margs.dataset_name)
    ds = raw.map(lambda b: tok(b["text"], truncation=True, max_length=margs.max_seq_length), batched=True)
    model = AutoModelFor<<head>>.from_pretrained(margs.model_name_or_path)
    trainer = Trainer(model=model, args=targs, train_dataset=ds["train"], eval_dataset=ds.get("validation"),
                      tokenizer=tok)
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
'''

_ACCEL_FSDP = '''compute_environment: LOCAL_MACHINE
distributed_type: FSDP
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_offload_params: false
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: <<nodes>>
num_processes: <<gpus>>
rdzv_backend: static
same_network: true
use_cpu: false
'''


def _hf(model: str, head: str, dataset: str, desc: str, accelerate: bool = False,
        bf16: bool = True) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        files = {"train.py": _sub(_HF_SCRIPT, desc=desc, head=head, model=model, seq=p.seq_len, dataset=dataset)}
        args = (f"--model_name_or_path {model} --do_train --per_device_train_batch_size {p.micro_batch} "
                f"--gradient_accumulation_steps {p.grad_accum} --learning_rate {p.lr:.1e} --max_steps {p.steps} "
                f"--max_seq_length {p.seq_len} --logging_steps {p.log_every} "
                f"--save_steps {p.ckpt_every or p.steps} {'--bf16' if bf16 else '--fp16'} --output_dir out")
        if p.eval_every:
            args += f" --eval_strategy steps --eval_steps {p.eval_every}"
        if accelerate and p.num_gpus > 1:
            files["configs/fsdp.yaml"] = _sub(_ACCEL_FSDP, nodes=p.nodes, gpus=p.num_gpus)
            cmd = f"accelerate launch --config_file configs/fsdp.yaml train.py {args}"
        elif p.num_gpus == 1:  # the Trainer uses every visible GPU: pin one
            cmd = f"CUDA_VISIBLE_DEVICES=0 python train.py {args}"
        else:
            cmd = f"{torchrun(p, 'train.py')} {args}"
        files["command.txt"] = cmd + "\n"
        return files
    return render


# ----------------------------------------------------------------------------- Lightning
_PL_SCRIPT = '''"""<<desc>> with PyTorch Lightning."""
import argparse

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from <<module>> import <<net>>, make_datasets


class LitModel(L.LightningModule):
    def __init__(self, lr: float):
        super().__init__()
        self.save_hyperparameters()
        self.net = <<net>>()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.<<opt>>(self.parameters(), lr=self.hparams.lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--num_nodes", type=int, default=1)
    ap.add_argument("--max_epochs", type=int, default=10)
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()
    train, val = make_datasets()
    trainer = L.Trainer(accelerator="gpu", devices=args.devices, num_nodes=args.num_nodes, strategy="<<strategy>>",
                        max_epochs=args.max_epochs, precision="16-mixed", log_every_n_steps=<<log>>)
    trainer.fit(LitModel(args.lr), DataLoader(train, batch_size=args.batch_size, num_workers=8),
                DataLoader(val, batch_size=args.batch_size, num_workers=8))


if __name__ == "__main__":
    main()
'''

_PL_DATA = '''import torch.nn as nn
import torchvision
import torchvision.transforms as T


def <<net>>():
    return torchvision.models.<<tv>>(num_classes=<<classes>>)


def make_datasets():
    tf = T.Compose([T.RandomResizedCrop(<<img>>), T.ToTensor()])
    return (torchvision.datasets.<<ds>>("/data", <<split_train>>, transform=tf),
            torchvision.datasets.<<ds>>("/data", <<split_val>>, transform=T.ToTensor()))
'''


def _lightning(tv: str, ds: str, classes: int, img: int, desc: str, opt: str = "SGD") -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        strategy = "ddp" if p.num_gpus > 1 else "auto"
        if ds == "CIFAR10":
            split_train, split_val = "train=True, download=False", "train=False"
        else:
            split_train, split_val = 'split="train"', 'split="val"'
        files = {"train.py": _sub(_PL_SCRIPT, desc=desc, module="data", net="build_net", opt=opt,
                                  strategy=strategy, log=p.log_every),
                 "data.py": _sub(_PL_DATA, net="build_net", tv=tv, classes=classes, img=img, ds=ds,
                                 split_train=split_train, split_val=split_val)}
        args = (f"--devices {p.gpus_per_node} --num_nodes {p.nodes} --max_epochs {p.epochs} "
                f"--batch_size {p.micro_batch} --lr {p.lr:g}")
        if p.nodes > 1:
            cmd = (f"srun --nodes {p.nodes} --ntasks-per-node {p.gpus_per_node} --gres=gpu:{p.gpus_per_node} "
                   f"python train.py {args}")
        else:
            cmd = f"python train.py {args}"
        files["command.txt"] = cmd + "\n"
        return files
    return render


# ----------------------------------------------------------------------------- timm
_TIMM_TRAIN = '''"""ImageNet classification trainer (timm style arguments)."""
import argparse

import timm
import torch
from timm.data import create_dataset, create_loader
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler_v2

parser = argparse.ArgumentParser(description="ImageNet training")
parser.add_argument("data_dir")
parser.add_argument("--model", default="resnet50")
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=300)
parser.add_argument("--lr", type=float, default=None)
parser.add_argument("--opt", default="sgd")
parser.add_argument("--sched", default="cosine")
parser.add_argument("--warmup-epochs", type=int, default=5)
parser.add_argument("--amp", action="store_true")
parser.add_argument("--log-interval", type=int, default=50)
parser.add_argument("--output", default="./output")


def main():
    args = parser.parse_args()
    torch.distributed.init_process_group("nccl")
    model = timm.create_model(args.model, num_classes=1000).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = create_optimizer_v2(model, opt=args.opt, lr=args.lr)
    scheduler, num_epochs = create_scheduler_v2(optimizer, sched=args.sched, num_epochs=args.epochs,
                                                warmup_epochs=args.warmup_epochs)
    train = create_loader(create_dataset("", root=args.data_dir, split="train"), input_size=(3, 224, 224),
                          batch_size=args.batch_size, is_training=True, distributed=True)
    for epoch in range(num_epochs):
        for x, y in train:
            with torch.autocast("cuda", enabled=args.amp):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step(epoch + 1)


if __name__ == "__main__":
    main()
'''


def _timm(model: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        args = (f"/data/imagenet --model {model} -b {p.micro_batch} --epochs {p.epochs} --lr {p.lr:g} "
                f"--amp --log-interval {p.log_every}")
        if p.num_gpus == 1:
            cmd = f"torchrun --nproc_per_node=1 train.py {args}"
        else:
            cmd = torchrun(p, "train.py") + " " + args
        return {"train.py": _TIMM_TRAIN, "command.txt": cmd + "\n"}
    return render


# ----------------------------------------------------------------------------- mmengine
_MM_TRAIN = '''"""Train a model from an mmengine config file."""
import argparse
import os

import torch
from mmengine.config import Config
from mmengine.runner import Runner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--launcher", default="none", choices=["none", "pytorch", "slurm"])
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    if args.launcher != "none":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    cfg = Config.fromfile(args.config)
    cfg.launcher = args.launcher
    if args.work_dir:
        cfg.work_dir = args.work_dir
    Runner.from_cfg(cfg).train()


if __name__ == "__main__":
    main()
'''

_MM_CONFIG = '''# <<desc>>
model = dict(
    type="<<mtype>>",
    backbone=dict(type="<<backbone>>", depth=<<depth>>),
    <<head>>)
train_dataloader = dict(batch_size=<<mbs>>, num_workers=8,
                        dataset=dict(type="<<dataset>>", data_root="/data/<<root>>", split="train"))
val_dataloader = dict(batch_size=<<mbs>>, num_workers=8,
                      dataset=dict(type="<<dataset>>", data_root="/data/<<root>>", split="val"))
optim_wrapper = dict(type="AmpOptimWrapper", optimizer=dict(type="SGD", lr=<<lr>>, momentum=0.9, weight_decay=1e-4))
max_epochs = <<epochs>>
param_scheduler = dict(type="MultiStepLR", by_epoch=True, milestones=[<<m1>>, <<m2>>], gamma=0.1)
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=max_epochs, val_interval=1)
default_hooks = dict(logger=dict(type="LoggerHook", interval=<<log>>),
                     checkpoint=dict(type="CheckpointHook", interval=1))
'''


def _mmengine(mtype: str, backbone: str, depth: int, head: str, dataset: str, root: str,
              cfg: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        e = p.epochs or 1
        conf = _sub(_MM_CONFIG, desc=f"{cfg}: {p.num_gpus} GPU(s) x {p.micro_batch} images", mtype=mtype,
                    backbone=backbone, depth=depth, head=head, mbs=p.micro_batch, dataset=dataset, root=root,
                    lr=f"{p.lr:g}", m1=max(1, e * 2 // 3), m2=max(1, e * 8 // 9), epochs=e, log=p.log_every)
        cmd = torchrun(p, f"tools/train.py configs/{cfg}.py --launcher pytorch")
        if p.num_gpus == 1:
            cmd = f"torchrun --nproc_per_node=1 tools/train.py configs/{cfg}.py --launcher pytorch"
        return {"tools/train.py": _MM_TRAIN, f"configs/{cfg}.py": conf, "command.txt": cmd + "\n"}
    return render


# ----------------------------------------------------------------------------- fairseq style
_FAIRSEQ_TRAIN = '''"""Sequence model trainer with fairseq-style options (--arch, --max-update, --max-tokens)."""
import argparse

import torch
import torch.distributed as dist

from models import build_model

ap = argparse.ArgumentParser()
ap.add_argument("data")
ap.add_argument("--task", default="<<task>>")
ap.add_argument("--arch", default="<<arch>>")
ap.add_argument("--max-update", "--max-steps", dest="max_steps", type=int, default=100000)
ap.add_argument("--max-tokens", type=int, default=4096)
ap.add_argument("--update-freq", type=int, default=1)
ap.add_argument("--lr", type=float, default=5e-4)
ap.add_argument("--log-interval", type=int, default=100)
ap.add_argument("--save-interval-updates", type=int, default=0)
ap.add_argument("--fp16", action="store_true")
args = ap.parse_args()

dist.init_process_group("nccl")
model = build_model(args.arch).cuda()
model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
for num_updates in range(1, args.max_steps + 1):
    for _ in range(args.update_freq):
        tokens = torch.randint(0, 32000, (args.max_tokens // 128, 128), device="cuda")
        loss = model(tokens).float().mean() / args.update_freq
        loss.backward()
    opt.step()
    opt.zero_grad()
'''

_FAIRSEQ_MODELS = '''import torch.nn as nn


class TransformerMT(nn.Module):
    def __init__(self, dim=1024, heads=16, layers=6):
        super().__init__()
        self.embed = nn.Embedding(32000, dim)
        self.body = nn.Transformer(d_model=dim, nhead=heads, num_encoder_layers=layers, num_decoder_layers=layers)
        self.out = nn.Linear(dim, 32000)

    def forward(self, tokens):
        x = self.embed(tokens)
        return self.out(self.body(x, x))


class LSTMLanguageModel(nn.Module):
    def __init__(self, dim=1024, layers=2):
        super().__init__()
        self.embed = nn.Embedding(32000, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=layers, batch_first=True)
        self.out = nn.Linear(dim, 32000)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.out(h)


def build_model(arch):
    if arch.startswith("lstm"):
        return LSTMLanguageModel()
    return TransformerMT()
'''


def _fairseq(task: str, arch: str, data: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        args = (f"{data} --task {task} --arch {arch} --max-update {p.steps} --max-tokens {p.micro_batch * 512} "
                f"--update-freq {p.grad_accum} --lr {p.lr:.1e} --log-interval {p.log_every} "
                f"--save-interval-updates {p.ckpt_every or p.steps} --fp16")
        cmd = torchrun(p, "train.py") + " " + args
        if p.num_gpus == 1:
            cmd = f"torchrun --nproc_per_node=1 train.py {args}"
        return {"train.py": _sub(_FAIRSEQ_TRAIN, task=task, arch=arch), "models.py": _FAIRSEQ_MODELS,
                "command.txt": cmd + "\n"}
    return render


# ----------------------------------------------------------------------------- plain PyTorch scripts
_PLAIN = '''"""<<desc>>"""
import argparse
import os
import time

import torch
import torch.distributed as dist
<<imports>>

ap = argparse.ArgumentParser()
ap.add_argument("--<<loop>>", type=int, default=<<default_len>>)
ap.add_argument("--batch-size", type=int, default=<<mbs>>)
ap.add_argument("--lr", type=float, default=<<lr>>)
ap.add_argument("--log-every", type=int, default=20)
<<extra_args>>args = ap.parse_args()

distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
if distributed:
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = <<build>>.cuda()
<<wrap>>opt = torch.optim.<<opt>>(model.parameters(), lr=args.lr)
<<body>>
'''

_STEP_BODY = '''t0 = time.time()
for step in range(1, args.max_steps + 1):
    x, y = next_batch(args.batch_size)
    loss = loss_fn(model, x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % args.log_every == 0 and (not distributed or dist.get_rank() == 0):
        dt = (time.time() - t0) / args.log_every
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} step {step}/{args.max_steps} | loss {loss.item():.4f} | {dt:.3f}s/it")
        t0 = time.time()
'''

_EPOCH_BODY = '''for epoch in range(args.epochs):
    for i, (x, y) in enumerate(loader(args.batch_size)):
        loss = loss_fn(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def _plain(desc: str, build: str, imports: str, opt: str = "AdamW", loop: str = "max-steps",
           extra_args: str = "", script: str = "train.py", extra_files: dict[str, str] | None = None,
           ddp: bool = True, cpu: bool = False) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        body = _STEP_BODY if loop == "max-steps" else _EPOCH_BODY
        wrap = ("if distributed:\n    model = torch.nn.parallel.DistributedDataParallel(model)\n" if ddp else "")
        text = _sub(_PLAIN, desc=desc, imports=imports, loop=loop, default_len=1000 if loop == "max-steps" else 10,
                    mbs=p.micro_batch, lr=f"{p.lr:.1e}", extra_args=extra_args, build=build, wrap=wrap,
                    opt=opt, body=body)
        if cpu:
            text = text.replace(".cuda()", "").replace('dist.init_process_group("nccl")', 'dist.init_process_group("gloo")')
            text = text.replace('    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n', "")
        length = f"--max-steps {p.steps}" if loop == "max-steps" else f"--epochs {p.epochs}"
        args = f"{length} --batch-size {p.micro_batch} --lr {p.lr:.1e} --log-every {p.log_every}"
        if cpu:
            cmd = f"CUDA_VISIBLE_DEVICES= python {script} {args}"
        else:
            cmd = f"{torchrun(p, script)} {args}"
        files = {script: text, "command.txt": cmd + "\n"}
        files.update(extra_files or {})
        return files
    return render


_EVAL = '''"""<<desc>>"""
import argparse
import os

import torch
import torch.distributed as dist
<<imports>>

ap = argparse.ArgumentParser()
ap.add_argument("--max-steps", type=int, default=500, help="evaluation batches")
ap.add_argument("--batch-size", type=int, default=<<mbs>>)
ap.add_argument("--log-every", type=int, default=20)
args = ap.parse_args()

distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
if distributed:
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = <<build>>.cuda().eval()
total_loss, seen = 0.0, 0
with torch.no_grad():
    for step in range(1, args.max_steps + 1):
        x, y = next_batch(args.batch_size)
        total_loss += loss_fn(model, x, y).item() * len(x)
        seen += len(x)
        if step % args.log_every == 0 and (not distributed or dist.get_rank() == 0):
            print(f"step {step}/{args.max_steps} | loss {total_loss / seen:.4f}")
if distributed:
    t = torch.tensor([total_loss, seen], device="cuda")
    dist.all_reduce(t)
    total_loss, seen = t.tolist()
print(f"eval loss {total_loss / seen:.4f} over {int(seen)} samples")
'''


def _eval(desc: str, build: str, imports: str, script: str, extra_files: dict[str, str]) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        text = _sub(_EVAL, desc=desc, imports=imports, mbs=p.micro_batch, build=build)
        cmd = f"{torchrun(p, script)} --max-steps {p.steps} --batch-size {p.micro_batch} --log-every {p.log_every}"
        return {script: text, "command.txt": cmd + "\n", **extra_files}
    return render


_SRUN_TRAIN = '''"""Generic data-parallel trainer launched by Slurm (one task per GPU); the model comes from --arch."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("--arch", default="resnet50")
ap.add_argument("--max-steps", type=int, default=1000)
ap.add_argument("--batch-size", type=int, default=64)
ap.add_argument("--lr", type=float, default=0.1)
ap.add_argument("--log-every", type=int, default=20)
args = ap.parse_args()

dist.init_process_group("nccl", rank=int(os.environ["SLURM_PROCID"]), world_size=int(os.environ["SLURM_NTASKS"]))
torch.cuda.set_device(int(os.environ["SLURM_LOCALID"]))
model = torch.nn.parallel.DistributedDataParallel(torchvision.models.get_model(args.arch).cuda())
opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
for step in range(1, args.max_steps + 1):
    x = torch.randn(args.batch_size, 3, 224, 224, device="cuda")
    loss = model(x).float().logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % args.log_every == 0 and dist.get_rank() == 0:
        print(f"step {step}/{args.max_steps} | loss {loss.item():.4f}")
'''

def _srun(p: Params) -> dict[str, str]:
    arch = p.arch
    if layout(p.num_gpus) is not None:
        tasks = f"--nodes={p.nodes} --ntasks-per-node={p.gpus_per_node}"
    else:  # e.g. 11 GPUs: Slurm spreads the tasks, the node count is not fixed by the command
        tasks = f"--ntasks={p.num_gpus}"
    cmd = (f"srun {tasks} --gpus-per-task=1 --cpus-per-task=8 python train.py --arch {arch} "
           f"--max-steps {p.steps} --batch-size {p.micro_batch} --lr {p.lr:g} --log-every {p.log_every}")
    return {"train.py": _SRUN_TRAIN, "command.txt": cmd + "\n"}


# ----------------------------------------------------------------------------- the catalogue
_LM_IMPORTS = "import torch.nn as nn\n\nfrom data import next_batch, loss_fn"
_CV_IMPORTS = "import torchvision\n\nfrom data import next_batch, loss_fn"

_PLAIN_DATA = '''import torch
import torch.nn.functional as F


def next_batch(batch_size):
    x = torch.randn(batch_size, <<shape>>, device="cuda")
    y = torch.randint(0, <<classes>>, (batch_size,), device="cuda")
    return x, y


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def loader(batch_size):
    for _ in range(<<batches>>):
        yield next_batch(batch_size)
'''


def _data(shape: str, classes: int, batches: int = 1000) -> dict[str, str]:
    return {"data.py": _sub(_PLAIN_DATA, shape=shape, classes=classes, batches=batches)}


def _t(name: str, workload: str | None, kinds: str, style: str, framework: str, model: str, family: str,
       params_b: float, iter_s: float, render: Callable[[Params], dict[str, str]], fits: Callable[[int], bool],
       **kw: object) -> Template:
    return Template(name=name, workload=workload, kinds=frozenset(kinds.split()), style=style, framework=framework,
                    model=model, family=family, params_b=params_b, iter_s=iter_s, render=render, fits=fits,
                    **kw)  # type: ignore[arg-type]


_ALL: list[Template] = [
    # ---- LLM pre-training
    _t("megatron_gpt_1b3", "gpt", "pretrain", "megatron", "megatron", "gpt-1.3b", "gpt", 1.3, 1.8,
       _megatron(24, 2048, 16), _megatron_fits(2, 1), tp=2, micro_batch=4, seq_len=2048, lr=2e-4),
    _t("megatron_gpt_13b_tp4_pp2", "gpt", "pretrain", "megatron", "megatron", "gpt-13b", "gpt", 13.0, 6.5,
       _megatron(40, 5120, 40), lambda g: g >= 16 and g % 8 == 0, tp=4, pp=2, micro_batch=1, seq_len=2048, lr=1e-4),
    _t("megatron_llama_7b_tp4", "gpt", "pretrain sft", "megatron", "megatron", "llama-7b", "gpt", 6.7, 4.2,
       _megatron(32, 4096, 32), lambda g: g >= 8 and g % 8 == 0, tp=4, micro_batch=1, seq_len=4096, lr=3e-4),
    _t("torchtitan_llama3_8b", "gpt", "pretrain", "torchtitan", "pytorch", "llama3-8b", "llama", 8.0, 3.5,
       _titan("8B"), _node_multiple(8, 8), micro_batch=1, seq_len=8192),
    _t("torchtitan_llama3_70b", "gpt", "pretrain", "torchtitan", "pytorch", "llama3-70b", "llama", 70.0, 9.0,
       _titan("70B"), lambda g: g >= 32 and g % 16 == 0, tp=8, pp=2, micro_batch=1, seq_len=8192),
    _t("nanogpt_gpt2_124m", "gpt", "pretrain train", "nanogpt", "pytorch", "gpt2", "gpt", 0.124, 0.45,
       _nanogpt("train_gpt2", 12, 12, 768, "openwebtext"), _node_multiple(1), micro_batch=12, seq_len=1024,
       lr=6e-4),
    _t("deepspeed_zero3_gpt_6b7", "gpt", "pretrain", "deepspeed", "deepspeed", "gpt-6.7b", "gpt", 6.7, 5.0,
       _deepspeed("EleutherAI/pythia-6.9b", "AutoModelForCausalLM", 3, "Continued pre-training of a 6.9B decoder"),
       _node_multiple(8, 8), micro_batch=2, seq_len=2048, lr=1.6e-4),
    _t("fsdp_llama_pretrain", "gpt", "pretrain", "custom", "pytorch", "llama-1b", "llama", 1.1, 1.2,
       _plain("Llama-style decoder pre-training with plain PyTorch FSDP (full shard, bf16).",
              "LlamaDecoder(dim=2048, n_layers=22, n_heads=32, vocab=32000)",
              "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nfrom llama_small import LlamaDecoder\n"
              "from data import next_batch, loss_fn",
              extra_files={"llama_small.py": "import torch.nn as nn\n\n\nclass LlamaDecoder(nn.Module):\n"
                           "    def __init__(self, dim, n_layers, n_heads, vocab):\n        super().__init__()\n"
                           "        self.emb = nn.Embedding(vocab, dim)\n        self.layers = nn.ModuleList(\n"
                           "            nn.TransformerEncoderLayer(dim, n_heads, batch_first=True) for _ in range(n_layers))\n"
                           "        self.head = nn.Linear(dim, vocab)\n\n    def forward(self, x):\n"
                           "        h = self.emb(x)\n        for layer in self.layers:\n            h = layer(h)\n"
                           "        return self.head(h)\n",
                           **_data("2048", 32000)}),
       _node_multiple(1, 2), micro_batch=4, seq_len=2048),
    # ---- fine-tuning (SFT), multimodal
    _t("hf_llama_sft_accelerate_fsdp", "gpt", "sft", "hf", "hf-trainer", "llama-7b", "llama", 6.7, 3.0,
       _hf("meta-llama/Llama-2-7b-hf", "CausalLM", "tatsu-lab/alpaca", "Supervised fine-tuning of Llama-2-7B",
           accelerate=True), _node_multiple(2, 2), micro_batch=4, seq_len=2048, lr=2e-5),
    _t("hf_mistral_sft", "gpt", "sft", "hf", "hf-trainer", "mistral-7b", "mistral", 7.2, 2.6,
       _hf("mistralai/Mistral-7B-v0.1", "CausalLM", "HuggingFaceH4/ultrachat_200k", "Chat SFT of Mistral-7B"),
       _node_multiple(1), micro_batch=2, seq_len=4096, lr=1e-5),
    _t("hf_llava_mllm", "gpt", "mllm sft", "hf", "hf-trainer", "llava-1.5-7b", "llama", 7.0, 3.2,
       _hf("llava-hf/llava-1.5-7b-hf", "Vision2Seq", "liuhaotian/LLaVA-Instruct-150K",
           "Visual instruction tuning of a LLaVA-style model", accelerate=True),
       _node_multiple(1), micro_batch=4, seq_len=2048, lr=2e-5),
    _t("deepspeed_zero1_gpt2_sft", "gpt", "sft", "deepspeed", "deepspeed", "gpt2-medium", "gpt", 0.355, 0.6,
       _deepspeed("gpt2-medium", "AutoModelForCausalLM", 1, "Instruction fine-tuning of GPT-2 medium"),
       _node_multiple(1, 2), micro_batch=8, seq_len=1024, lr=5e-5),
    _t("nanogpt_finetune_gpt2_xl", "gpt", "sft", "nanogpt", "pytorch", "gpt2-xl", "gpt", 1.5, 1.1,
       _nanogpt("finetune_shakespeare", 48, 25, 1600, "shakespeare", init="gpt2-xl"), _node_multiple(1),
       micro_batch=1, seq_len=1024, lr=3e-5),
    _t("hf_qwen_math_sft", "gpt", "sft", "hf", "hf-trainer", "qwen2-1.5b", "gpt", 1.5, 0.9,
       _hf("Qwen/Qwen2-1.5B", "CausalLM", "openai/gsm8k", "Math SFT of a 1.5B decoder"),
       _node_multiple(1), micro_batch=8, seq_len=1024, lr=1e-5),
    # ---- BERT / Transformer / LSTM LM
    _t("deepspeed_zero2_bert_large", "bert", "pretrain train", "deepspeed", "deepspeed", "bert-large", "bert", 0.34,
       0.9, _deepspeed("bert-large-uncased", "AutoModelForMaskedLM", 2, "BERT-large MLM pre-training"),
       _node_multiple(1, 2), micro_batch=16, seq_len=512, lr=1e-4),
    _t("megatron_bert_large", "bert", "pretrain train", "megatron", "megatron", "bert-large", "bert", 0.34, 0.7,
       _megatron(24, 1024, 16, bert=True), _megatron_fits(1, 1), micro_batch=32, seq_len=512, lr=1e-4),
    _t("hf_bert_glue", "bert", "sft train", "hf", "hf-trainer", "bert-base", "bert", 0.11, 0.25,
       _hf("bert-base-uncased", "SequenceClassification", "glue", "MNLI fine-tuning of BERT-base", bf16=False),
       _between(1, 8), micro_batch=32, seq_len=128, lr=2e-5),
    _t("fairseq_transformer_wmt", "transformer", "train", "fairseq", "pytorch", "transformer-big", "t5", 0.21, 0.5,
       _fairseq("translation", "transformer_vaswani_wmt_en_de_big", "data-bin/wmt16_en_de"), _any,
       micro_batch=8, lr=1e-3, log_every=100),
    _t("hf_t5_translation", "transformer", "sft train", "hf", "hf-trainer", "t5-base", "t5", 0.22, 0.4,
       _hf("t5-base", "Seq2SeqLM", "wmt16", "English-Romanian translation fine-tuning of T5-base", bf16=True),
       _between(1, 16), micro_batch=16, seq_len=512, lr=3e-4),
    _t("fairseq_lstm_lm", "lm", "train", "fairseq", "pytorch", "lstm-lm", "rnn", 0.07, 0.2,
       _fairseq("language_modeling", "lstm_lm", "data-bin/wikitext-103"), _any, micro_batch=4, lr=1e-3,
       log_every=100),
    _t("word_lm_lstm", "lm", "train", "custom", "pytorch", "lstm-lm", "rnn", 0.03, 0.08,
       _plain("Word-level LSTM language model on WikiText-2 (truncated BPTT).",
              "nn.LSTM(650, 650, num_layers=2, batch_first=True)", _LM_IMPORTS, opt="SGD",
              extra_args='ap.add_argument("--bptt", type=int, default=35)\n', extra_files=_data("35, 650", 33278)),
       _any, micro_batch=20, lr=20.0, log_every=200),
    # ---- vision
    _t("timm_resnet50", "resnet50", "train", "timm", "pytorch", "resnet50", "resnet", 0.026, 0.3, _timm("resnet50"),
       _any, per_epoch=True, micro_batch=128, lr=0.5, log_every=50, steps_per_epoch=1251),
    _t("timm_mobilenetv3_small_batch", "imagenet-small-batch", "train", "timm", "pytorch", "mobilenetv3_large_100",
       "cnn", 0.0055, 0.12, _timm("mobilenetv3_large_100"), _any, per_epoch=True, micro_batch=32, lr=0.05,
       log_every=50, steps_per_epoch=5004),
    _t("mmpretrain_resnet50", "resnet50", "train", "mmengine", "pytorch", "resnet50", "resnet", 0.026, 0.32,
       _mmengine("ImageClassifier", "ResNet", 50, 'head=dict(type="LinearClsHead", num_classes=1000, in_channels=2048)',
                 "ImageNet", "imagenet", "resnet50_8xb32_in1k"), _any, per_epoch=True, micro_batch=32, lr=0.1,
       log_every=100, steps_per_epoch=5004),
    _t("mmdet_yolov3", "yolov3", "train", "mmengine", "pytorch", "yolov3-d53", "yolo", 0.062, 0.6,
       _mmengine("YOLOV3", "Darknet", 53, 'bbox_head=dict(type="YOLOV3Head", num_classes=80)',
                 "CocoDataset", "coco", "yolov3_d53_8xb8_608e_coco"), _any, per_epoch=True, micro_batch=8,
       lr=0.001, log_every=50, steps_per_epoch=1833),
    _t("lightning_resnet18_cifar", "resnet18", "train", "lightning", "lightning", "resnet18", "resnet", 0.011, 0.05,
       _lightning("resnet18", "CIFAR10", 10, 32, "ResNet-18 on CIFAR-10"), _between(1, 16), per_epoch=True,
       micro_batch=128, lr=0.1, log_every=50, steps_per_epoch=49),
    _t("ddp_resnet18_imagenet", "resnet18", "train", "custom", "pytorch", "resnet18", "resnet", 0.011, 0.15,
       _plain("ResNet-18 ImageNet training with DistributedDataParallel.", "torchvision.models.resnet18()",
              _CV_IMPORTS, opt="SGD", extra_files=_data("3, 224, 224", 1000)), _any, micro_batch=256, lr=0.1,
       log_every=50),
    _t("lightning_vit_small_batch", "imagenet-small-batch", "train", "lightning", "lightning", "vit_b_16", "vit",
       0.086, 0.35, _lightning("vit_b_16", "ImageNet", 1000, 224, "ViT-B/16 on ImageNet, small batch", opt="AdamW"),
       _any, per_epoch=True, micro_batch=32, lr=3e-4, log_every=50, steps_per_epoch=5004),
    _t("ddp_yolov3_coco", "yolov3", "train", "custom", "pytorch", "yolov3", "yolo", 0.062, 0.55,
       _plain("YOLOv3 detector training on COCO (Darknet-53 backbone).", "YOLOv3(num_classes=80)",
              "from yolo import YOLOv3\nfrom data import next_batch, loss_fn",
              extra_files={"yolo.py": "import torch.nn as nn\nimport torchvision\n\n\nclass YOLOv3(nn.Module):\n"
                           "    def __init__(self, num_classes=80):\n        super().__init__()\n"
                           "        self.backbone = torchvision.models.resnet50()\n"
                           "        self.head = nn.Linear(1000, num_classes)\n\n    def forward(self, x):\n"
                           "        return self.head(self.backbone(x))\n", **_data("3, 608, 608", 80)}),
       _any, micro_batch=16, lr=1e-3, log_every=20),
    _t("cyclegan_horse2zebra", "cyclegan", "train", "custom", "pytorch", "cyclegan", "gan", 0.028, 0.25,
       _plain("CycleGAN (ResNet-9 generators, PatchGAN discriminators) on horse2zebra.",
              "CycleGAN(ngf=64, ndf=64)", "from cyclegan import CycleGAN\nfrom data import next_batch, loss_fn",
              opt="Adam", extra_files={"cyclegan.py": "import torch.nn as nn\n\n\nclass CycleGAN(nn.Module):\n"
                                       "    def __init__(self, ngf=64, ndf=64):\n        super().__init__()\n"
                                       "        self.g = nn.Sequential(nn.Conv2d(3, ngf, 7, padding=3), nn.ReLU(),"
                                       " nn.Conv2d(ngf, 3, 7, padding=3))\n\n    def forward(self, x):\n"
                                       "        return self.g(x).flatten(1)[:, :2]\n", **_data("3, 256, 256", 2)}),
       _between(1, 8), micro_batch=1, lr=2e-4, log_every=100),
    # ---- speech, recommendation, RL
    _t("ddp_deepspeech2", "deepspeech2", "train", "custom", "pytorch", "deepspeech2", "rnn", 0.087, 0.7,
       _plain("DeepSpeech2 (2 conv + 5 bidirectional GRU layers) on LibriSpeech with CTC loss.",
              "DeepSpeech2(rnn_layers=5, hidden=1024)", "from ds2 import DeepSpeech2\nfrom data import next_batch, loss_fn",
              extra_files={"ds2.py": "import torch.nn as nn\n\n\nclass DeepSpeech2(nn.Module):\n"
                           "    def __init__(self, rnn_layers=5, hidden=1024):\n        super().__init__()\n"
                           "        self.rnn = nn.GRU(161, hidden, num_layers=rnn_layers, bidirectional=True,"
                           " batch_first=True)\n        self.fc = nn.Linear(2 * hidden, 29)\n\n"
                           "    def forward(self, x):\n        return self.fc(self.rnn(x)[0]).mean(1)\n",
                           **_data("400, 161", 29)}), _any, micro_batch=32, lr=3e-4, log_every=20),
    _t("dlrm_criteo", "recommendation", "train", "custom", "pytorch", "dlrm", "dlrm", 0.54, 0.06,
       _plain("DLRM click-through-rate model on Criteo Terabyte (sharded embeddings, data-parallel MLPs).",
              "DLRM(embedding_dim=128, bottom_mlp=[512, 256, 128], top_mlp=[1024, 1024, 512, 256, 1])",
              "from dlrm import DLRM\nfrom data import next_batch, loss_fn",
              extra_files={"dlrm.py": "import torch.nn as nn\n\n\nclass DLRM(nn.Module):\n"
                           "    def __init__(self, embedding_dim, bottom_mlp, top_mlp):\n        super().__init__()\n"
                           "        self.emb = nn.EmbeddingBag(40_000_000, embedding_dim, mode='sum')\n"
                           "        self.mlp = nn.Linear(13, top_mlp[-1] + 1)\n\n    def forward(self, x):\n"
                           "        return self.mlp(x)\n", **_data("13", 2)}), _any, micro_batch=2048, lr=1.0,
       log_every=100),
    _t("ncf_movielens", "recommendation", "train", "custom", "pytorch", "ncf", "dlrm", 0.03, 0.04,
       _plain("Neural collaborative filtering (NeuMF) on MovieLens-20M.", "NeuMF(users=138493, items=26744, factors=64)",
              "from ncf import NeuMF\nfrom data import next_batch, loss_fn",
              extra_files={"ncf.py": "import torch.nn as nn\n\n\nclass NeuMF(nn.Module):\n"
                           "    def __init__(self, users, items, factors):\n        super().__init__()\n"
                           "        self.u = nn.Embedding(users, factors)\n        self.fc = nn.Linear(factors, 2)\n\n"
                           "    def forward(self, x):\n        return self.fc(x)\n", **_data("64", 2)}),
       _between(1, 8), micro_batch=65536, lr=1e-3, log_every=100),
    _t("rl_a3c_atari", "a3c", "train", "custom", "pytorch", "a3c", "mlp", 0.002, 0.05,
       _plain("A3C-style actor-critic on Atari Pong: CPU actor processes feed a GPU learner.",
              "ActorCritic(n_actions=6)", "from actor_critic import ActorCritic\nfrom data import next_batch, loss_fn",
              opt="RMSprop", extra_files={"actor_critic.py": "import torch.nn as nn\n\n\nclass ActorCritic(nn.Module):\n"
                                          "    def __init__(self, n_actions):\n        super().__init__()\n"
                                          "        self.body = nn.Sequential(nn.Flatten(), nn.Linear(4 * 84 * 84, 256),"
                                          " nn.ReLU())\n        self.pi = nn.Linear(256, n_actions)\n\n"
                                          "    def forward(self, x):\n        return self.pi(self.body(x))\n",
                                          **_data("4, 84, 84", 6)}),
       _between(1, 8), micro_batch=20, lr=7e-4, log_every=100),
    _t("rl_ppo_mujoco", "a3c", "train", "custom", "pytorch", "ppo", "mlp", 0.001, 0.03,
       _plain("PPO on a MuJoCo locomotion task (vectorised environments, GPU policy updates).",
              "Policy(obs_dim=17, act_dim=6)", "from policy import Policy\nfrom data import next_batch, loss_fn",
              opt="Adam", extra_files={"policy.py": "import torch.nn as nn\n\n\nclass Policy(nn.Module):\n"
                                       "    def __init__(self, obs_dim, act_dim):\n        super().__init__()\n"
                                       "        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(),"
                                       " nn.Linear(64, act_dim))\n\n    def forward(self, x):\n"
                                       "        return self.net(x)\n", **_data("17", 6)}),
       _one, micro_batch=2048, lr=3e-4, log_every=50),
    # ---- eval and debug jobs (short)
    _t("llm_eval_harness", "gpt", "eval", "custom", "pytorch", "llama-7b", "llama", 6.7, 0.8,
       _eval("Evaluate a Llama checkpoint on a benchmark suite (log-likelihood of the choices, no training).",
             "AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', torch_dtype=torch.bfloat16)",
             "from transformers import AutoModelForCausalLM\n\nfrom data import next_batch, loss_fn", "evaluate.py",
             _data("4096", 32000)),
       _node_multiple(1), micro_batch=8, lr=0.0, log_every=10),
    _t("imagenet_eval_resnet50", "resnet50", "eval", "custom", "pytorch", "resnet50", "resnet", 0.026, 0.1,
       _eval("Validation pass of a ResNet-50 checkpoint on ImageNet val (top-1/top-5).",
             "torchvision.models.resnet50()", _CV_IMPORTS, "validate.py", _data("3, 224, 224", 1000)),
       _between(1, 8), micro_batch=256, lr=0.0, log_every=20),
    _t("torchtitan_debugmodel", "gpt", "debug", "torchtitan", "pytorch", "llama3-debug", "llama", 0.01, 0.15,
       _titan("debugmodel"), _node_multiple(1), micro_batch=8, seq_len=2048, log_every=1),
    _t("nanogpt_shakespeare_char_debug", "gpt", "debug", "nanogpt", "pytorch", "gpt-char", "gpt", 0.01, 0.05,
       _nanogpt("train_shakespeare_char", 6, 6, 384, "shakespeare_char"), _between(1, 8), micro_batch=64,
       seq_len=256, lr=1e-3, log_every=10),
    _t("megatron_gpt_debug_tiny", "gpt", "debug", "megatron", "megatron", "gpt-125m", "gpt", 0.125, 0.3,
       _megatron(12, 768, 12, desc="Smoke test of the training stack with a 125M GPT"), _megatron_fits(1, 1),
       micro_batch=4, seq_len=1024, lr=6e-4, log_every=1),
    # ---- CPU-only and the catch-all
    _t("cpu_tabular_mlp", None, "train debug eval", "custom", "pytorch", "mlp", "mlp", 0.0001, 0.02,
       _plain("Churn prediction MLP on tabular features (CPU only).", "nn.Sequential(nn.Linear(64, 256), nn.ReLU(), "
              "nn.Linear(256, 2))", "import torch.nn as nn\n\nfrom data import next_batch, loss_fn", opt="Adam",
              extra_files={"data.py": _sub(_PLAIN_DATA, shape="64", classes=2, batches=100).replace(', device="cuda"', "")},
              cpu=True),
       lambda g: g == 0, micro_batch=512, lr=1e-3, log_every=50),
    _t("srun_generic_ddp", None, "train", "custom", "pytorch", "resnet50", "resnet", 0.026, 0.3, _srun,
       lambda g: g >= 1, micro_batch=64, lr=0.1, log_every=20),
]

TEMPLATES: dict[str, Template] = {t.name: t for t in _ALL}
CATCH_ALL = "srun_generic_ddp"
CPU_TEMPLATE = "cpu_tabular_mlp"

for _tpl in _ALL:
    if _tpl.workload is not None and _tpl.workload not in CATALOGUE:
        raise ValueError(f"template {_tpl.name}: unknown workload class {_tpl.workload!r}")
    if not _tpl.kinds <= set(KINDS):
        raise ValueError(f"template {_tpl.name}: unknown kinds {sorted(_tpl.kinds - set(KINDS))}")


def templates_for(num_gpus: int, kinds: set[str] | None = None, workload: str | None = None) -> list[Template]:
    """Templates that can run on `num_gpus` GPUs, serve one of `kinds` and are of `workload` (None: any)."""
    out = []
    for t in _ALL:
        if t.name == CATCH_ALL or not t.fits(num_gpus):
            continue
        if kinds is not None and not (t.kinds & kinds):
            continue
        if workload is not None and t.workload != workload:
            continue
        out.append(t)
    return out


MAX_EPOCHS = 300
"""Per-epoch templates never configure more epochs than this; longer runs get longer epochs."""


def default_params(t: Template, num_gpus: int, steps: int, seed: int = 0) -> Params:
    """Parameters for `t` on `num_gpus` GPUs with `steps` configured steps (for per-epoch templates the steps
    are split into epochs of the template's epoch length, scaled by GPUs)."""
    lay = layout(num_gpus) if num_gpus >= 1 else (1, 0)
    nodes, per = lay if lay is not None else (1, num_gpus)
    log_every = max(1, min(t.log_every, steps // 10 or 1))
    p = Params(num_gpus=num_gpus, nodes=nodes, gpus_per_node=per, steps=max(1, steps), micro_batch=t.micro_batch,
               lr=t.lr, seq_len=t.seq_len, tp=t.tp, pp=t.pp, log_every=log_every, seed=seed)
    if t.per_epoch:
        spe = max(1, t.steps_per_epoch * 8 // max(1, num_gpus))
        if steps < spe:
            spe = max(1, steps)
        if steps > MAX_EPOCHS * spe:  # a very long run reads a bigger dataset, not 10^5 tiny epochs
            spe = -(-steps // MAX_EPOCHS)
        epochs = max(1, round(steps / spe))
        p = replace(p, epochs=epochs, steps_per_epoch=spe, steps=epochs * spe, log_every=max(1, min(log_every, spe)))
    return p


__all__ = [
    "CATCH_ALL",
    "CPU_TEMPLATE",
    "KINDS",
    "TEMPLATES",
    "Params",
    "Template",
    "default_params",
    "layout",
    "templates_for",
]

