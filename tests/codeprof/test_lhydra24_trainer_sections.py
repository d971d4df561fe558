"""Lightning Trainer arguments read from a config section (`Trainer(**cfg.section)`), and LightningCLI's
default devices when nothing sets them."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.trainer_sections import trainer_spreads
from tests.codeprof.codeprof_support import make_job

SPREAD = {
    "drive/train.py": """
        import hydra
        from drive.builders import make_trainer

        @hydra.main(config_path="conf", config_name="main")
        def main(cfg):
            trainer = make_trainer(cfg)
            trainer.fit(model, loader(cfg.loader.batch_size))
    """,
    "drive/builders.py": """
        import pytorch_lightning as pl
        from omegaconf import OmegaConf

        def make_trainer(cfg):
            opts = cfg.engine.trainer.opts
            if cfg.engine.debug:
                opts = OmegaConf.merge(opts, cfg.engine.debug_opts)
            return pl.Trainer(callbacks=[], **opts)
    """,
    "drive/conf/main.yaml": "defaults:\n  - engine: standard\n  - _self_\nloader:\n  batch_size: 12\n",
    "drive/conf/engine/standard.yaml": "debug: false\ntrainer:\n  opts:\n    gpus: GPUS_PLACEHOLDER\n    max_epochs: 30\n"
                                       "    accumulate_grad_batches: 2\n",
}


def value(facts, field):
    """A fact's value; None when the analyzer left the field open."""
    got = facts.get(field)
    return None if got is None else got.value


def job(tmp_path, gpus):
    files = dict(SPREAD)
    files["drive/conf/engine/standard.yaml"] = files["drive/conf/engine/standard.yaml"].replace("GPUS_PLACEHOLDER", gpus)
    make_job(tmp_path, files)
    return analyze_code(tmp_path, "python drive/train.py", use_llm=False).facts


def test_a_trainer_built_from_a_config_section_takes_its_gpu_count_and_epochs(tmp_path):
    f = job(tmp_path, "4")
    assert f["num_gpus"].value == 4 and f["epochs"].value == 30
    assert f["micro_batch_size"].value == 12 and f["global_batch_size"].value == 12 * 2 * 4


def test_a_section_asking_for_every_gpu_leaves_the_count_and_the_global_batch_open(tmp_path):
    f = job(tmp_path, "-1")
    assert value(f, "num_gpus") is None and value(f, "global_batch_size") is None
    assert f["micro_batch_size"].value == 12


def test_the_spread_source_follows_one_named_assignment_through_an_attribute():
    text = "class E:\n    def __init__(self, cfg):\n        self._run = cfg.experiment\n" \
           "    def go(self):\n        return Trainer(**self._run.trainer, devices=[0])\n"
    assert trainer_spreads(text) == [(5, "cfg.experiment.trainer")]


CLI = {
    "geo/main.py": """
        from lightning.pytorch.cli import LightningCLI

        def main():
            LightningCLI(subclass_mode_model=True, subclass_mode_data=True)
    """,
    "runs/seg.yaml": "trainer:\n  max_epochs: 15\nmodel:\n  class_path: SegTask\n  init_args:\n    backbone: small\n"
                     "data:\n  class_path: TileData\n  init_args:\n    batch_size: 24\n",
    "runs/seg4.yaml": "trainer:\n  devices: 4\n  max_epochs: 15\ndata:\n  class_path: TileData\n  init_args:\n"
                      "    batch_size: 24\n",
}


def test_a_lightning_cli_run_without_devices_uses_every_visible_gpu(tmp_path):
    make_job(tmp_path, CLI)
    f = analyze_code(tmp_path, "python geo/main.py fit --config runs/seg.yaml", use_llm=False).facts
    assert f["micro_batch_size"].value == 24 and f["epochs"].value == 15
    assert value(f, "num_gpus") is None and value(f, "global_batch_size") is None


def test_a_lightning_cli_run_that_names_its_devices_keeps_them(tmp_path):
    make_job(tmp_path, CLI)
    f = analyze_code(tmp_path, "python geo/main.py fit --config runs/seg4.yaml", use_llm=False).facts
    assert f["num_gpus"].value == 4 and f["global_batch_size"].value == 96
