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
