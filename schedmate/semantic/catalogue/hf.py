"""Hugging Face Trainer templates, launched by python, torchrun or `accelerate launch` (FSDP)."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub, torchrun

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
