"""Lightning's `devices` in a config and `trainer.gpus=` on the command line: the command line's count wins."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.spread_gpus import lightning_count

from .codeprof_support import make_job

TRAIN = """
    import hydra
    import pytorch_lightning as pl

    @hydra.main(config_path="conf", config_name="base")
    def main(cfg):
        trainer = hydra.utils.instantiate(cfg.trainer)
        trainer.fit(build_model(cfg))

    if __name__ == "__main__":
        main()
"""

BASE = """
    trainer:
      _target_: pytorch_lightning.Trainer
      max_epochs: 20
      accelerator: auto
      devices: 1
      strategy: ddp
"""


def test_a_command_line_gpus_override_wins_over_the_configs_devices(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "conf/base.yaml": BASE})
    res = analyze_code(tmp_path, "python train.py trainer.gpus=4", use_llm=False)
    assert res.facts["num_gpus"].value == 4


def test_the_configs_devices_stand_without_an_override(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "conf/base.yaml": BASE})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.facts["num_gpus"].value == 1


def test_devices_win_when_neither_is_on_the_command_line():
    assert lightning_count({"devices": (2, ["conf/a.yaml:4"]), "gpus": (8, ["conf/b.yaml:9"])})[0] == 2
    assert lightning_count({"devices": (2, ["conf/a.yaml:4"]), "gpus": (8, ["cmd"])})[0] == 8
    assert lightning_count({"gpus": (3, ["train.py:7"])})[0] == 3
