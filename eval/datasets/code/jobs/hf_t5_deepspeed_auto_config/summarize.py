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
