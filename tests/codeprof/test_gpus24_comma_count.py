"""A GPU count taken as the commas of the visible-device list plus one
(`$(( $(echo $DEVICES | grep -o , | wc -l) + 1 ))`) is read without running the pipeline."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TRAIN = """
    from transformers import HfArgumentParser, Trainer, TrainingArguments

    (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
    Trainer(model=build(), args=args, train_dataset=load()).train()
"""

LAUNCH = """export CUDA_VISIBLE_DEVICES=1,3,5
WORKERS=$(( $(echo $CUDA_VISIBLE_DEVICES | {count}) + 1 ))
torchrun --nproc_per_node $WORKERS tune.py --per_device_train_batch_size 3 --output_dir runs
"""


def test_commas_counted_with_grep_plus_one_give_the_gpu_count(tmp_path):
    make_job(tmp_path, {"tune.py": TRAIN, "go.sh": LAUNCH.format(count="grep -o , | wc -l")})
    res = analyze_code(tmp_path, "bash go.sh", use_llm=False)
    assert res.facts["num_gpus"].value == 3
    assert res.facts["global_batch_size"].value == 9


def test_commas_counted_with_tr_plus_one_give_the_gpu_count(tmp_path):
    make_job(tmp_path, {"tune.py": TRAIN, "go.sh": LAUNCH.format(count="tr -cd ',' | wc -c")})
    res = analyze_code(tmp_path, "bash go.sh", use_llm=False)
    assert res.facts["num_gpus"].value == 3


def test_an_unset_device_list_leaves_the_count_unknown(tmp_path):
    script = LAUNCH.format(count="grep -o , | wc -l").replace("export CUDA_VISIBLE_DEVICES=1,3,5\n", "")
    make_job(tmp_path, {"tune.py": TRAIN, "go.sh": script})
    res = analyze_code(tmp_path, "bash go.sh", use_llm=False)
    assert res.facts.get("num_gpus") is None or res.facts["num_gpus"].value is None
