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
