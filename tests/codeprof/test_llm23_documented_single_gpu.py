"""A one-process HF Trainer job uses every visible GPU, so its count is open, unless the script that launches it
documents one GPU (a comment `# fits on a single A100`, a file name `..._single_gpu.sh`); a script that also
names several GPUs, or says nothing, leaves the count open. Fixtures are written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TRAIN = """
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, Trainer, TrainingArguments


    @dataclass
    class ModelArgs:
        model_name_or_path: str = field(default="EleutherAI/pythia-410m")


    if __name__ == "__main__":
        model_args, train_args = HfArgumentParser((ModelArgs, TrainingArguments)).parse_args_into_dataclasses()
        Trainer(model=None, args=train_args).train()
"""

LINE = ("python tune.py --model_name_or_path EleutherAI/pythia-410m --per_device_train_batch_size 3 "
        "--gradient_accumulation_steps 5 --num_train_epochs 2 --output_dir out\n")


def _gpus_and_global(root: Path, command: str) -> tuple[object, object]:
    facts = analyze_code(root, command, use_llm=False).facts
    g, b = facts.get("num_gpus"), facts.get("global_batch_size")
    return (None if g is None else g.value), (None if b is None else b.value)


def test_a_comment_saying_the_script_fits_one_a100_makes_the_plain_python_trainer_one_gpu(tmp_path: Path) -> None:
    root = make_job(tmp_path, {"tune.py": TRAIN, "run/tune.sh": "# fits on a single A100 40G\n" + LINE})
    assert _gpus_and_global(root, "bash run/tune.sh") == (1, 15)


def test_a_script_file_named_for_a_single_gpu_makes_it_one_gpu(tmp_path: Path) -> None:
    root = make_job(tmp_path, {"tune.py": TRAIN, "run/tune_single_gpu.sh": LINE})
    assert _gpus_and_global(root, "bash run/tune_single_gpu.sh")[0] == 1


def test_a_script_that_also_names_several_gpus_leaves_the_count_open(tmp_path: Path) -> None:
    text = "# one GPU is enough for the small model; the large one wants 4x A100\n" + LINE
    root = make_job(tmp_path, {"tune.py": TRAIN, "run/tune.sh": text})
    assert _gpus_and_global(root, "bash run/tune.sh")[0] is None


def test_a_script_that_documents_nothing_leaves_the_count_open(tmp_path: Path) -> None:
    root = make_job(tmp_path, {"tune.py": TRAIN, "run/tune.sh": "# instruction tuning\n" + LINE})
    assert _gpus_and_global(root, "bash run/tune.sh")[0] is None
