"""Batch scripts that compute their step count from a token budget with `$(echo "..." | bc)`: bc's integer
arithmetic (truncating division, `^` as a power) gives the steps; anything bc would not settle at scale 0
stays unknown."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.shell.bc import bc_eval

from .codeprof_support import make_job

TRAIN = """
    from transformers import HfArgumentParser, Trainer, TrainingArguments

    def main():
        parser = HfArgumentParser((TrainingArguments,))
        (args,) = parser.parse_args_into_dataclasses()
        Trainer(model=build(), args=args, train_dataset=load()).train()

    if __name__ == "__main__":
        main()
"""

SBATCH = """#!/usr/bin/bash
#SBATCH --nodes=3
#SBATCH --gres=gpu:4
{
  nodes=3
  gpus_each=4
  micro=2
  accum=8
  ctx=2048
  budget="3*10^9"
  steps=$(echo "${budget} / ($ctx * $micro * $accum * $nodes * $gpus_each)" | bc)
  echo "steps: $steps"
  srun torchrun --nnodes ${nodes} --nproc_per_node ${gpus_each} --node_rank $SLURM_NODEID \\
    pretrain.py --per_device_train_batch_size ${micro} --gradient_accumulation_steps ${accum} \\
    --num_train_epochs 1 --max_steps ${steps} --output_dir out
}
"""


def test_a_step_count_computed_with_bc_from_a_token_budget_is_read(tmp_path):
    make_job(tmp_path, {"pretrain.py": TRAIN, "job.sh": SBATCH})
    res = analyze_code(tmp_path, "sbatch job.sh", use_llm=False)
    # 3e9 / (2048 * 2 * 8 * 3 * 4) = 7629.39... -> bc truncates to 7629
    assert res.facts["train_steps"].value == 7629
    assert res.facts["num_gpus"].value == 12
    assert res.facts["global_batch_size"].value == 2 * 8 * 12


def test_bc_at_a_fractional_scale_leaves_the_steps_unknown(tmp_path):
    script = SBATCH.replace('| bc)', '| bc -l)')
    make_job(tmp_path, {"pretrain.py": TRAIN, "job.sh": script})
    res = analyze_code(tmp_path, "sbatch job.sh", use_llm=False)
    assert res.facts.get("train_steps") is None or res.facts["train_steps"].value is None


@pytest.mark.parametrize("expr, value", [
    ("7 / 2", 3),
    ("-7 / 2", -3),
    ("2^3^2", 512),
    ("-2^2", 4),
    ("17 % 5 + 1", 3),
    ("(1+2)*3", 9),
])
def test_bc_integer_rules(expr, value):
    assert bc_eval(expr) == value


@pytest.mark.parametrize("expr", ["scale=2; 7/2", "1.5 * 4", "x * 2", "4 / 0", "2^-1", "s(1)", ""])
def test_what_bc_would_not_settle_at_scale_zero_is_none(expr):
    assert bc_eval(expr) is None
