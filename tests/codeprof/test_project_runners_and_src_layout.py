"""Launches through a project's environment runner (`uv run`, `poetry run`, `conda run -n env`) and console
scripts or `python -m` modules of a package kept under `src/` (the src layout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """\
import argparse
import torch
from torch.utils.data import DataLoader

p = argparse.ArgumentParser()
p.add_argument("--micro", type=int, default=6)
p.add_argument("--rounds", type=int, default=3)
args = p.parse_args()
loader = DataLoader(range(100), batch_size=args.micro)
for epoch in range(args.rounds):
    for batch in loader:
        pass
"""


@pytest.mark.parametrize("runner", ["uv run", "uv run --frozen --python 3.11", "poetry run", "pipenv run",
                                    "conda run -n trainenv --no-capture-output", "pixi run -e cuda",
                                    "hatch run gpu:"])
def test_a_project_runner_in_front_of_torchrun_leaves_the_launch_as_it_is(tmp_path: Path, runner: str):
    wd = make_job(tmp_path, {"bin/train.py": TRAIN, "go.sh": 'N=$1\nshift\n' + runner.replace("gpu: ", "gpu:")
                             + ('' if runner.endswith(":") else ' ') + 'torchrun --nproc_per_node=$N bin/train.py "$@"\n'})
    f = analyze_code(wd, "bash go.sh 3 --micro 5", use_llm=False).facts
    assert f["num_gpus"].value == 3
    assert f["micro_batch_size"].value == 5 and f["global_batch_size"].value == 15


def test_a_project_runner_in_front_of_a_plain_interpreter_reads_as_the_interpreter_alone(tmp_path: Path):
    wd = make_job(tmp_path, {"bin/train.py": TRAIN.replace("args = p.parse_args()", "args = p.parse_args()\n"
                                                             "model = torch.nn.Linear(4, 4).to('cuda:0')")})
    plain = analyze_code(wd, "python bin/train.py --rounds 7", use_llm=False).facts
    f = analyze_code(wd, "uv run --with rich python bin/train.py --rounds 7", use_llm=False).facts
    assert f["epochs"].value == 7 and f["micro_batch_size"].value == 6
    assert {k: v.value for k, v in f.items()} == {k: v.value for k, v in plain.items()}
    f = analyze_code(wd, "uv run -m bin.train --rounds 2", use_llm=False).facts
    assert f["epochs"].value == 2


def test_a_runner_word_without_its_run_subcommand_is_no_launch(tmp_path: Path):
    wd = make_job(tmp_path, {"bin/train.py": TRAIN})
    p = analyze_code(wd, "uv sync && python bin/train.py", use_llm=False)
    assert p.extras["entry_script"] == "bin/train.py"


PYPROJECT = """\
[project]
name = "voicebox"
version = "0.1"

[project.scripts]
voicebox-finetune = "voicebox.train.finetune:main"
"""


def test_a_console_script_of_a_src_layout_package_is_read_from_its_file(tmp_path: Path):
    wd = make_job(tmp_path, {"pyproject.toml": PYPROJECT, "src/voicebox/__init__.py": "",
                             "src/voicebox/train/__init__.py": "", "src/voicebox/train/finetune.py": TRAIN})
    p = analyze_code(wd, "voicebox-finetune --micro 12 --rounds 4", use_llm=False)
    assert p.extras["entry_script"] == "src/voicebox/train/finetune.py"
    f = p.facts
    assert f["micro_batch_size"].value == 12 and f["epochs"].value == 4
    p = analyze_code(wd, "torchrun --nproc_per_node 2 -m voicebox.train.finetune", use_llm=False)
    assert p.extras["entry_script"] == "src/voicebox/train/finetune.py"
    assert p.facts["global_batch_size"].value == 12
