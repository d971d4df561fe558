"""A DeepSpeed config that leaves accumulation and the global batch to "auto" is filled by the HF Trainer or
Accelerate, both of which accumulate once unless told otherwise: with no accumulation named anywhere else the
global batch is micro x GPUs; an accumulation option, keyword or setting anywhere keeps the old reading.
Fixtures are written for these tests (a click-style trainer building TrainingArguments, an Accelerate loop)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

DS_AUTO = """
    {
      "bf16": {"enabled": "auto"},
      "zero_optimization": {"stage": 2},
      "gradient_accumulation_steps": "auto",
      "train_batch_size": "auto",
      "train_micro_batch_size_per_gpu": "auto"
    }
"""

CLICK_TRAINER = """
    import click
    from transformers import Trainer, TrainingArguments


    def fit(out, epochs, per_device_train_batch_size, deepspeed):
        args = TrainingArguments(
            output_dir=out,
            per_device_train_batch_size=per_device_train_batch_size,
            num_train_epochs=epochs,
            deepspeed=deepspeed,
            bf16=True,
        )
        Trainer(model=None, args=args).train()


    @click.command()
    @click.option("--out", type=str, default="ckpt")
    @click.option("--epochs", type=int, default=3)
    @click.option("--per-device-train-batch-size", type=int, default=4)
    @click.option("--deepspeed", type=str, default=None)
    def main(**kwargs):
        fit(**kwargs)


    if __name__ == "__main__":
        main()
"""

ACCEL_LOOP = """
    import yaml
    from accelerate import Accelerator
    from torch.utils.data import DataLoader


    def train(cfg, accelerator):
        loader = DataLoader(range(100), batch_size=cfg["batch_size"], shuffle=True)
        if accelerator.state.deepspeed_plugin is not None:
            steps_per_update = accelerator.state.deepspeed_plugin.deepspeed_config["gradient_accumulation_steps"]
        for epoch in range(cfg["num_epochs"]):
            for step, batch in enumerate(loader):
                pass


    if __name__ == "__main__":
        cfg = yaml.safe_load(open("cfg/run.yaml"))
        train(cfg, Accelerator())
"""

RUN_YAML = """
    model_name: "EleutherAI/pythia-1b"
    batch_size: 12
    num_epochs: 2
"""


def _facts(root: Path, command: str) -> dict[str, object]:
    facts = analyze_code(root, command, use_llm=False).facts
    return {k: (None if f is None else f.value) for k, f in facts.items()}


def test_a_click_trainer_with_a_deepspeed_auto_config_and_no_accumulation_anywhere_accumulates_once(
    tmp_path: Path,
) -> None:
    root = make_job(tmp_path, {"ds/zero2.json": DS_AUTO, "tuning/fit.py": CLICK_TRAINER})
    got = _facts(root, "deepspeed --num_gpus=4 --module tuning.fit --deepspeed ds/zero2.json "
                       "--per-device-train-batch-size 6 --epochs 2")
    assert got["num_gpus"] == 4
    assert got["micro_batch_size"] == 6
    assert got["grad_accum_steps"] == 1
    assert got["global_batch_size"] == 24


def test_an_accelerate_loop_that_only_reads_the_auto_value_back_accumulates_once(tmp_path: Path) -> None:
    root = make_job(tmp_path, {"ds/zero2.json": DS_AUTO, "loop.py": ACCEL_LOOP, "cfg/run.yaml": RUN_YAML})
    got = _facts(root, "accelerate launch --num_processes=2 --num_machines=1 --use_deepspeed "
                       "--deepspeed_config_file=ds/zero2.json loop.py")
    assert got["num_gpus"] == 2
    assert got["micro_batch_size"] == 12
    assert got["global_batch_size"] == 24


def test_an_accumulation_option_the_command_leaves_unset_keeps_the_global_batch_unknown(tmp_path: Path) -> None:
    trainer = CLICK_TRAINER.replace(
        "            deepspeed=deepspeed,\n",
        "            deepspeed=deepspeed,\n            gradient_accumulation_steps=accum,\n",
    ).replace("def fit(out, epochs,", "def fit(out, epochs, accum,").replace(
        '    @click.option("--deepspeed"', '    @click.option("--accum", type=int, required=True)\n'
        '    @click.option("--deepspeed"')
    root = make_job(tmp_path, {"ds/zero2.json": DS_AUTO, "tuning/fit.py": trainer})
    got = _facts(root, "deepspeed --num_gpus=4 --module tuning.fit --deepspeed ds/zero2.json "
                       "--per-device-train-batch-size 6")
    assert got.get("grad_accum_steps") is None
    assert got.get("global_batch_size") is None


def test_a_deepspeed_config_that_states_its_accumulation_is_read_as_stated(tmp_path: Path) -> None:
    stated = DS_AUTO.replace('"gradient_accumulation_steps": "auto"', '"gradient_accumulation_steps": 3')
    root = make_job(tmp_path, {"ds/zero2.json": stated, "tuning/fit.py": CLICK_TRAINER})
    got = _facts(root, "deepspeed --num_gpus=4 --module tuning.fit --deepspeed ds/zero2.json "
                       "--per-device-train-batch-size 6")
    assert got["grad_accum_steps"] == 3
    assert got["global_batch_size"] == 72
