"""A Lightning Trainer built from an argparse namespace whose code sets `args.max_epochs = -1` has no epoch
limit (something else ends the run), so it gets no epoch count, not Lightning's 1000-epoch default; the same
job without that assignment keeps the default. Fixtures are written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TRAIN = """
    from argparse import ArgumentParser

    import pytorch_lightning as pl
    from pytorch_lightning import Trainer

    if __name__ == "__main__":
        parser = ArgumentParser()
        parser.add_argument("--micro_bsz", default=4, type=int)
        parser.add_argument("--token_budget", default=0, type=int)
        parser = Trainer.add_argparse_args(parser)
        args = parser.parse_args()
        {limit}
        args.real_bsz = int(args.devices) * args.micro_bsz
        trainer = Trainer.from_argparse_args(args)
        trainer.fit(pl.LightningModule())
"""


def _epochs(root: Path, command: str) -> object:
    fact = analyze_code(root, command, use_llm=False).facts.get("epochs")
    return None if fact is None else fact.value


def test_code_setting_max_epochs_to_minus_one_leaves_the_epochs_unknown(tmp_path: Path) -> None:
    root = make_job(tmp_path, {"pretrain.py": TRAIN.replace("{limit}", "args.max_epochs = -1  # until the budget")})
    cmd = "python pretrain.py --accelerator gpu --devices 2 --micro_bsz 8 --token_budget 1000000"
    assert _epochs(root, cmd) is None


def test_the_same_trainer_without_that_assignment_keeps_lightnings_default(tmp_path: Path) -> None:
    root = make_job(tmp_path, {"pretrain.py": TRAIN.replace("{limit}", "args.note = 'no limit set'")})
    cmd = "python pretrain.py --accelerator gpu --devices 2 --micro_bsz 8"
    assert _epochs(root, cmd) == 1000
