"""A program installed as a thin Python script (setuptools `scripts=`) is read as the module it calls."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.launch.script_wrappers import wrapped_module
from schedmate.codeprof.reader import Workdir
from tests.codeprof.codeprof_support import make_job

CLI = """\
import argparse
import torch


def train():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--epochs", type=int, default=40)
    args = p.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    loader = torch.utils.data.DataLoader(None, batch_size=args.batch_size)
    for epoch in range(args.epochs):
        for x in loader:
            model(x).sum().backward()
"""

WRAPPER = """\
#!python
import moltrain.cli as cli

if __name__ == "__main__":
    cli.train()
"""

NOT_A_WRAPPER = """\
#!/usr/bin/env python
import sys
import moltrain.cli as cli

sys.argv.append("--epochs=3")
if len(sys.argv) > 5:
    print("too many")
cli.train()
"""


def test_a_wheel_script_that_calls_one_module_is_read_as_that_module(tmp_path: Path):
    wd = make_job(tmp_path, {"moltrain/__init__.py": "", "moltrain/cli.py": CLI,
                             "moltrain-0.3.data/scripts/moltrain-fit": WRAPPER})
    f = analyze_code(wd, "moltrain-fit --epochs 7", use_llm=False).facts
    assert f["micro_batch_size"].value == 12 and f["epochs"].value == 7
    assert f["num_gpus"].value == 1


def test_a_checkout_bin_script_is_found_too(tmp_path: Path):
    wd = make_job(tmp_path, {"moltrain/cli.py": CLI, "bin/moltrain-fit": WRAPPER})
    assert wrapped_module(Workdir(wd), "moltrain-fit") == "moltrain.cli"


def test_a_script_with_its_own_logic_or_no_python_shebang_is_not_guessed_at(tmp_path: Path):
    wd = make_job(tmp_path, {"moltrain/cli.py": CLI, "scripts/moltrain-fit": NOT_A_WRAPPER,
                             "scripts/other": WRAPPER.replace("#!python", "#!/bin/sh")})
    assert wrapped_module(Workdir(wd), "moltrain-fit") is None
    assert wrapped_module(Workdir(wd), "other") is None
    assert wrapped_module(Workdir(wd), "absent") is None
