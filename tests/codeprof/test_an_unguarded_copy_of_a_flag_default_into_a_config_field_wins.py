"""`config.train_epochs = args.epoch` with no `if` around it runs after the config object is built, so the flag's
default replaces the field's dataclass default; a guarded copy (`if args.epoch: ...`) still needs the flag on the
command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

SETTINGS = """
from dataclasses import dataclass, field


@dataclass
class RunSettings:
    train_epochs: int = field(default=40, metadata={"help": "Number of training epochs."})

    @classmethod
    def load(cls, name):
        return cls()
"""

ENTRY = """
import argparse

from pkg.settings import RunSettings


def main(args):
    config = RunSettings.load(args.name)
{copy}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="base")
    parser.add_argument("--epoch", type=int, default=2)
    main(parser.parse_args())
"""


@pytest.mark.parametrize(("copy", "cmd", "want"), [
    ("    config.train_epochs = args.epoch", "python run.py", 2),
    ("    config.train_epochs = args.epoch", "python run.py --epoch 5", 5),
    ("    if args.name == 'x':\n        config.train_epochs = args.epoch", "python run.py", 40),
])
def test_the_copied_flag_sets_the_epochs(tmp_path: Path, copy: str, cmd: str, want: int) -> None:
    make_job(tmp_path, {"pkg/__init__.py": "", "pkg/settings.py": SETTINGS,
                        "run.py": ENTRY.replace("{copy}", copy)})
    assert analyze_code(tmp_path, command=cmd, use_llm=False).value("epochs") == want
