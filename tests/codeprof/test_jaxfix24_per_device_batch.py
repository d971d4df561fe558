"""A Flax script that parses Hugging Face `TrainingArguments` is not run by the HF Trainer: its
`per_device_train_batch_size` is a device's batch (the micro batch), and the global batch (that times the
devices JAX finds and the accumulation) stays open until the device count is known; the same script written
for torch still gets the Trainer's DataParallel reading."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

FLAX_TRAIN = '''
import sys
from dataclasses import dataclass, field

import jax
import optax
from transformers import HfArgumentParser


@dataclass
class TrainingArguments:
    output_dir: str = field(metadata={"help": "Where checkpoints go."})
    per_device_train_batch_size: int = field(default=8, metadata={"help": "Batch per device for training."})
    gradient_accumulation_steps: int = field(default=1, metadata={"help": "Steps to accumulate."})
    num_train_epochs: float = field(default=3.0, metadata={"help": "Epochs."})
    model_shards: int = field(default=1, metadata={"help": "Devices each model copy is split over."})


def main():
    parser = HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    host_batch = training_args.per_device_train_batch_size * jax.local_device_count() // training_args.model_shards
    per_step = host_batch * training_args.gradient_accumulation_steps * jax.process_count()
    step = jax.pmap(train_step, axis_name="batch")
    for batch in loader(host_batch):
        state = step(state, shard(batch))


if __name__ == "__main__":
    main()
'''

TORCH_TRAIN = '''
import torch
from transformers import HfArgumentParser, Trainer, TrainingArguments


def main():
    parser = HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    Trainer(model=model, args=training_args, train_dataset=ds).train()


if __name__ == "__main__":
    main()
'''

CMD = "python train.py --output_dir out --per_device_train_batch_size 24 --gradient_accumulation_steps 2"


def test_a_flax_scripts_per_device_batch_is_the_micro_batch_and_the_global_stays_open(tmp_path):
    make_job(tmp_path, {"train.py": FLAX_TRAIN})
    f = analyze_code(tmp_path, CMD, use_llm=False).facts
    assert f["micro_batch_size"].value == 24
    assert "global_batch_size" not in f or f["global_batch_size"].value is None


def test_the_same_arguments_under_the_torch_trainer_keep_the_dataparallel_reading(tmp_path):
    make_job(tmp_path, {"train.py": TORCH_TRAIN})
    f = analyze_code(tmp_path, CMD, use_llm=False).facts
    assert f["micro_batch_size"].value == 24
    assert f.get("global_batch_size") is None or f["global_batch_size"].value != 24
