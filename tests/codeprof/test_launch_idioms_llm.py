"""Launch idioms of LLM fine-tuning repositories: a launcher running a module (`torchrun -m pkg.train`), GPU
lists counted in the script, DeepSpeed's view of the visible GPUs, and module constants the entry script
sets again under the branch the run takes. Fixtures are written for these tests."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.launcher import parse_launch
from schedmate.codeprof.reader import Workdir

from .codeprof_support import make_job

HF_ENTRY = """
    from dataclasses import dataclass, field
    import transformers

    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(default="gpt2")

    def main():
        parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
        model_args, training_args = parser.parse_args_into_dataclasses()
        model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
        trainer = transformers.Trainer(model=model, args=training_args)
        trainer.train()

    if __name__ == "__main__":
        main()
"""


def test_a_launcher_running_a_module_reads_that_module_as_the_entry(tmp_path):
    make_job(tmp_path, {
        "mypkg/__init__.py": "",
        "mypkg/train.py": HF_ENTRY,
    })
    cmd = "torchrun --nproc-per-node 4 -m mypkg.train --per_device_train_batch_size 2 --max_steps 900"
    launch = parse_launch(cmd, Workdir(tmp_path))
    assert launch.script == "mypkg/train.py"
    prof = analyze_code(tmp_path, command=cmd, use_llm=False)
    assert prof.value("num_gpus") == 4
    assert prof.value("micro_batch_size") == 2
    assert prof.value("global_batch_size") == 8
    assert prof.value("train_steps") == 900


def test_a_batch_script_counting_its_gpus_sees_the_list_slurm_hands_the_job(tmp_path):
    make_job(tmp_path, {
        "train.py": HF_ENTRY,
        "job.sh": """
            #!/bin/bash
            #SBATCH -N 1
            #SBATCH --gres=gpu:4
            total=${TOTAL:-32}
            per_dev=2
            if [ -z "$CUDA_VISIBLE_DEVICES" ]; then
                ngpu=1
            else
                ngpu=$(jq -n "[$CUDA_VISIBLE_DEVICES] | length")
            fi
            accu=$(($total / $per_dev / $ngpu))
            torchrun --nproc_per_node=$ngpu train.py --per_device_train_batch_size $per_dev \\
                --gradient_accumulation_steps $accu --max_steps 100
        """,
    })
    prof = analyze_code(tmp_path, command="sbatch job.sh", use_llm=False)
    assert prof.value("num_gpus") == 4
    assert prof.value("global_batch_size") == 32


def test_a_gpu_list_counted_with_awk_gives_the_process_count(tmp_path):
    make_job(tmp_path, {
        "train.py": HF_ENTRY,
        "run.sh": """
            DEVICES="0,1,2"
            N=$(echo $DEVICES | awk -F',' '{print NF}')
            torchrun --nproc_per_node $N train.py --per_device_train_batch_size 1
        """,
    })
    assert analyze_code(tmp_path, command="bash run.sh", use_llm=False).value("num_gpus") == 3


def test_deepspeed_with_no_gpu_flags_starts_one_process_per_visible_gpu(tmp_path):
    make_job(tmp_path, {"train.py": HF_ENTRY})
    cmd = "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5 deepspeed train.py --per_device_train_batch_size 2"
    prof = analyze_code(tmp_path, command=cmd, use_llm=False)
    assert prof.value("num_gpus") == 6
    assert prof.value("global_batch_size") == 12


def test_deepspeed_include_with_an_empty_gpu_list_leaves_the_count_open(tmp_path):
    make_job(tmp_path, {
        "train.py": HF_ENTRY,
        "run.sh": """
            GPU_LIST=""
            deepspeed --include localhost:${GPU_LIST} train.py --per_device_train_batch_size 2
        """,
    })
    assert analyze_code(tmp_path, command="bash run.sh", use_llm=False).value("num_gpus") is None


def test_a_module_constant_divided_by_the_world_size_under_the_ddp_branch_is_the_value_used(tmp_path):
    make_job(tmp_path, {
        "finetune.py": """
            import os
            import transformers

            MICRO = 4
            TOTAL = 64
            ACCUM = TOTAL // MICRO
            world_size = int(os.environ.get("WORLD_SIZE", 1))
            ddp = world_size != 1
            if ddp:
                ACCUM = ACCUM // world_size

            model = transformers.AutoModelForCausalLM.from_pretrained("gpt2")
            trainer = transformers.Trainer(
                model=model,
                args=transformers.TrainingArguments(
                    per_device_train_batch_size=MICRO,
                    gradient_accumulation_steps=ACCUM,
                    num_train_epochs=2,
                    output_dir="out",
                ),
            )
            trainer.train()
        """,
    })
    prof = analyze_code(tmp_path, command="torchrun --nproc_per_node 4 finetune.py", use_llm=False)
    assert prof.value("micro_batch_size") == 4
    assert prof.value("global_batch_size") == 64


def test_trainingarguments_built_in_code_without_max_steps_runs_its_epochs_not_a_schedulers_step_count(tmp_path):
    make_job(tmp_path, {
        "train.py": """
            import argparse
            import transformers

            p = argparse.ArgumentParser()
            p.add_argument("--epochs", type=int, default=2)
            p.add_argument("--micro-batch-size", type=int, default=None,
                           help="Batch size per model instance (local batch size). Global batch size is local "
                                "batch size times data parallel size times number of micro batches.")
            p.add_argument("--num-training-steps", type=int, default=5000, help="steps for the lr schedule")
            args = p.parse_args()
            model = transformers.AutoModelForCausalLM.from_pretrained("gpt2")
            trainer = transformers.Trainer(
                model=model,
                args=transformers.TrainingArguments(
                    output_dir="out",
                    num_train_epochs=args.epochs,
                    per_device_train_batch_size=args.micro_batch_size,
                ),
            )
            trainer.train()
        """,
    })
    prof = analyze_code(tmp_path, command="torchrun --nproc_per_node 2 train.py --micro-batch-size 4", use_llm=False)
    assert prof.value("train_steps") is None
    assert prof.value("epochs") == 2
    assert prof.value("micro_batch_size") == 4
    assert prof.value("global_batch_size") == 8


def test_deepspeed_json_batch_keys_the_script_sets_from_its_arguments_replace_the_files_numbers(tmp_path):
    make_job(tmp_path, {
        "ds.json": '{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, '
                   '"zero_optimization": {"stage": 1}}\n',
        "train.py": """
            import argparse
            import json
            import deepspeed

            p = argparse.ArgumentParser()
            p.add_argument("--batch-size", type=int, default=2)
            p.add_argument("--grad-acc", type=int, default=1)
            p.add_argument("--total-iters", type=int, default=10)
            p = deepspeed.add_config_arguments(p)
            args = p.parse_args()

            def main():
                if args.deepspeed_config is not None:
                    with open(args.deepspeed_config) as f:
                        ds_config = json.load(f)
                    ds_config["train_micro_batch_size_per_gpu"] = args.batch_size
                    ds_config["gradient_accumulation_steps"] = args.grad_acc
                    args.deepspeed_config = None
                model, *_ = deepspeed.initialize(model=None, config=ds_config)

            if __name__ == "__main__":
                main()
        """,
    })
    cmd = "deepspeed --num_gpus 4 train.py --batch-size 8 --grad-acc 2 --total-iters 500 --deepspeed_config ds.json"
    prof = analyze_code(tmp_path, command=cmd, use_llm=False)
    assert prof.value("micro_batch_size") == 8
    assert prof.value("global_batch_size") == 64
    assert prof.value("train_steps") == 500


def test_an_angle_bracket_placeholder_in_a_documented_command_is_one_word_not_two_redirections(tmp_path):
    make_job(tmp_path, {"train.py": HF_ENTRY})
    cmd = ("torchrun --nproc_per_node=2 train.py --model_name_or_path <path to Llama-2-13b weights> "
           "--per_device_train_batch_size 4 --output_dir <your output dir> --max_steps 200")
    prof = analyze_code(tmp_path, command=cmd, use_llm=False)
    assert prof.value("params") is not None and 1.2e10 < prof.value("params") < 1.4e10
    assert prof.value("global_batch_size") == 8
    assert prof.value("train_steps") == 200


def test_a_real_redirection_in_the_command_stays_a_redirection(tmp_path):
    make_job(tmp_path, {"train.py": HF_ENTRY, "args.txt": "x\n"})
    cmd = "torchrun --nproc_per_node=2 train.py --per_device_train_batch_size 4 --max_steps 30 <args.txt >log.txt 2>&1"
    prof = analyze_code(tmp_path, command=cmd, use_llm=False)
    assert prof.value("train_steps") == 30
    assert prof.value("global_batch_size") == 8
