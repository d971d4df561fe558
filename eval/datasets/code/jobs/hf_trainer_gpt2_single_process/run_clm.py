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
