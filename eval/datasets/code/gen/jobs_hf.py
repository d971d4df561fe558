"""Hugging Face Trainer and Accelerate jobs."""

import json

from .common import job

HF_CLS = '''
"""Fine-tune a sequence classifier on GLUE with the Hugging Face Trainer."""
import logging
import sys
from dataclasses import dataclass, field
from typing import Optional

import datasets
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser, Trainer,
                          TrainingArguments, set_seed)

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Path to pretrained model or model identifier"})
    cache_dir: Optional[str] = field(default=None)


@dataclass
class DataTrainingArguments:
    task_name: str = field(default="mnli")
    max_seq_length: int = field(default=128, metadata={"help": "Max input length after tokenization"})
    pad_to_max_length: bool = field(default=True)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    set_seed(training_args.seed)
    raw = datasets.load_dataset("glue", data_args.task_name)
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(model_args.model_name_or_path, num_labels=3)

    def preprocess(ex):
        return tokenizer(ex["premise"], ex["hypothesis"], padding="max_length", truncation=True,
                         max_length=data_args.max_seq_length)

    train = raw["train"].map(preprocess, batched=True)
    trainer = Trainer(model=model, args=training_args, train_dataset=train, tokenizer=tokenizer)
    result = trainer.train()
    logger.info("train metrics %s", result.metrics)


if __name__ == "__main__":
    main()
'''

job("hf_trainer_bert_glue",
    "python -m torch.distributed.run --nproc_per_node 4 run_glue.py --model_name_or_path bert-base-uncased "
    "--task_name mnli --do_train --per_device_train_batch_size 32 --learning_rate 2e-5 --num_train_epochs 3 "
    "--fp16 --output_dir /tmp/mnli",
    {"run_glue.py": HF_CLS},
    framework="hf-trainer", model_family="bert", model_name="bert-base", params=110e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=32,
    global_batch_size=128, grad_accum_steps=1, seq_len=128, epochs=3, precision="fp16")

job("trap_lying_comment_roberta",
    "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint $MASTER_ADDR:29400 run_glue.py "
    "--model_name_or_path roberta-large --task_name mnli --do_train --per_device_train_batch_size 16 "
    "--gradient_accumulation_steps 2 --max_seq_length 256 --num_train_epochs 10 --bf16 --output_dir out/",
    {"run_glue.py": HF_CLS.replace(
        "def main():",
        "# NOTE: this recipe uses an effective batch of 4096 on 64 GPUs with fp32 and 1 epoch.\n"
        "# (per_device_train_batch_size=64, 8 nodes). Do not change.\ndef main():")},
    notes="a comment states a different scale; the command decides",
    framework="hf-trainer", model_family="bert", model_name="roberta-large", params=355e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=16,
    global_batch_size=512, grad_accum_steps=2, seq_len=256, epochs=10, precision="bf16")

HF_CLM = '''
"""Causal language modelling with the Trainer (single process)."""
from dataclasses import dataclass, field

from datasets import load_dataset
from transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, HfArgumentParser,
                          Trainer, TrainingArguments)


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="gpt2")
    dataset_name: str = field(default="wikitext")
    dataset_config_name: str = field(default="wikitext-103-raw-v1")
    block_size: int = field(default=1024)


def main():
    script_args, training_args = HfArgumentParser((ScriptArguments, TrainingArguments)).parse_args_into_dataclasses()
    tok = AutoTokenizer.from_pretrained(script_args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path)
    raw = load_dataset(script_args.dataset_name, script_args.dataset_config_name)

    def group(examples):
        ids = sum(examples["input_ids"], [])
        n = len(ids) // script_args.block_size * script_args.block_size
        chunks = [ids[i:i + script_args.block_size] for i in range(0, n, script_args.block_size)]
        return {"input_ids": chunks}

    lm = raw.map(lambda e: tok(e["text"]), batched=True, remove_columns=["text"]).map(group, batched=True)
    collator = DataCollatorForLanguageModeling(tok, mlm=False)
    Trainer(model=model, args=training_args, train_dataset=lm["train"], data_collator=collator).train()


if __name__ == "__main__":
    main()
'''
job("hf_trainer_gpt2_single_process",
    "python run_clm.py --per_device_train_batch_size 4 --block_size 512 --num_train_epochs 1 --output_dir out",
    {"run_clm.py": HF_CLM},
    notes="one process; the Trainer would use every visible GPU through DataParallel: GPU count not fixed",
    framework="hf-trainer", model_family="gpt", model_name="gpt2", params=124e6,
    parallelism={"data": None}, num_nodes=1, micro_batch_size=4, grad_accum_steps=1, seq_len=512, epochs=1,
    precision="fp32")

SFT = '''
"""Supervised fine-tuning of a Llama model with the HF Trainer, launched by accelerate (FSDP)."""
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class SFTArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    data_path: str = field(default="data/instructions.jsonl")
    max_seq_length: int = field(default=1024)


def main():
    sft_args, train_args = HfArgumentParser((SFTArguments, TrainingArguments)).parse_args_into_dataclasses()
    tok = AutoTokenizer.from_pretrained(sft_args.model_name_or_path)
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(sft_args.model_name_or_path, torch_dtype=torch.bfloat16)
    ds = load_dataset("json", data_files=sft_args.data_path)["train"]
    ds = ds.map(lambda e: tok(e["prompt"] + e["response"], truncation=True, max_length=sft_args.max_seq_length))
    Trainer(model=model, args=train_args, train_dataset=ds).train()


if __name__ == "__main__":
    main()
'''
ACC_FSDP = '''
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
downcast_bf16: 'no'
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch: BACKWARD_PRE
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 2
num_processes: 16
rdzv_backend: static
same_network: true
use_cpu: false
'''
job("hf_sft_llama_accelerate_fsdp",
    "accelerate launch --config_file configs/fsdp_2x8.yaml sft.py --per_device_train_batch_size 4 "
    "--gradient_accumulation_steps 8 --bf16 --num_train_epochs 3 --max_seq_length 2048 --output_dir ckpt",
    {"sft.py": SFT, "configs/fsdp_2x8.yaml": ACC_FSDP,
     "configs/ddp_1x8.yaml": ACC_FSDP.replace("FSDP", "MULTI_GPU").replace("num_machines: 2", "num_machines: 1")
     .replace("num_processes: 16", "num_processes: 8")},
    framework="hf-trainer", model_family="llama", model_name="llama-7b", params=6.7e9,
    parallelism={"data": "fsdp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=4,
    global_batch_size=512, grad_accum_steps=8, seq_len=2048, epochs=3, precision="bf16")

T5_HF = '''
"""Fine-tune T5 for summarisation with Seq2SeqTrainer and DeepSpeed."""
from dataclasses import dataclass, field

from datasets import load_dataset
from transformers import (AutoModelForSeq2SeqLM, AutoTokenizer, HfArgumentParser, Seq2SeqTrainer,
                          Seq2SeqTrainingArguments)


@dataclass
class Args:
    model_name_or_path: str = field(default="t5-base")
    max_source_length: int = field(default=1024)
    max_target_length: int = field(default=128)


def main():
    args, targs = HfArgumentParser((Args, Seq2SeqTrainingArguments)).parse_args_into_dataclasses()
    tok = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path)
    ds = load_dataset("cnn_dailymail", "3.0.0")

    def prep(b):
        enc = tok(["summarize: " + a for a in b["article"]], max_length=args.max_source_length, truncation=True)
        enc["labels"] = tok(b["highlights"], max_length=args.max_target_length, truncation=True)["input_ids"]
        return enc

    train = ds["train"].map(prep, batched=True, remove_columns=ds["train"].column_names)
    Seq2SeqTrainer(model=model, args=targs, train_dataset=train, tokenizer=tok).train()


if __name__ == "__main__":
    main()
'''
DS_AUTO = json.dumps({
    "bf16": {"enabled": "auto"},
    "zero_optimization": {"stage": 2, "allgather_bucket_size": 2e8, "overlap_comm": True,
                          "reduce_scatter": True, "contiguous_gradients": True},
    "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
    "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
}, indent=2) + "\n"
job("hf_t5_deepspeed_auto_config",
    "deepspeed --num_gpus 8 summarize.py --deepspeed ds_config_zero2.json --model_name_or_path t5-large "
    "--do_train --per_device_train_batch_size 8 --gradient_accumulation_steps 2 --max_steps 20000 --bf16 "
    "--max_source_length 512 --output_dir out --predict_with_generate",
    {"summarize.py": T5_HF, "ds_config_zero2.json": DS_AUTO},
    framework="hf-trainer", model_family="t5", model_name="t5-large", params=770e6,
    parallelism={"data": "zero", "zero_stage": 2}, num_nodes=1, gpus_per_node=8, num_gpus=8, micro_batch_size=8,
    global_batch_size=128, grad_accum_steps=2, seq_len=512, train_steps=20000, precision="bf16")

ACCEL_LOOP = '''
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
'''
LM_DATA = '''
import torch


def load_blocks(path, seq_len):
    return torch.randint(0, 50257, (2048, seq_len))
'''
job("accelerate_gpt2_medium_multi_gpu",
    "accelerate launch --multi_gpu --num_processes 8 --mixed_precision bf16 train_accel.py "
    "--model_name gpt2-medium --batch_size 8 --gradient_accumulation_steps 4 --seq_len 1024 --num_epochs 5",
    {"train_accel.py": ACCEL_LOOP, "lm_data.py": LM_DATA},
    framework="accelerate", model_family="gpt", model_name="gpt2-medium", params=355e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=8, num_gpus=8, micro_batch_size=8,
    global_batch_size=256, grad_accum_steps=4, seq_len=1024, epochs=5, precision="bf16")

ACC_DS = '''
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 2
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: false
  zero_stage: 2
distributed_type: DEEPSPEED
machine_rank: 0
mixed_precision: fp16
num_machines: 1
num_processes: 4
use_cpu: false
'''
job("accelerate_deepspeed_zero2_config",
    "accelerate launch --config_file accelerate_ds.yaml train_accel.py --model_name gpt2 --batch_size 16 "
    "--gradient_accumulation_steps 2 --num_epochs 2",
    {"train_accel.py": ACCEL_LOOP, "lm_data.py": LM_DATA, "accelerate_ds.yaml": ACC_DS},
    framework="accelerate", model_family="gpt", model_name="gpt2", params=124e6,
    parallelism={"data": "zero", "zero_stage": 2}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=16,
    global_batch_size=128, grad_accum_steps=2, seq_len=512, epochs=2, precision="fp16")
