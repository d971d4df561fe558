"""A launcher followed by a stray interpreter (`torchrun ... python train.py`): the script after it is the entry."""

from __future__ import annotations

from schedmate.codeprof.launcher import parse_launch
from schedmate.codeprof.reader import Workdir

from .codeprof_support import make_job

FILES = {"tools/fit.py": "import torch\n", "pkg/__init__.py": "", "pkg/run.py": "import torch\n"}


def test_torchrun_then_python_reads_the_script_after_the_interpreter(tmp_path):
    wd = Workdir(make_job(tmp_path, FILES))
    L = parse_launch("torchrun --nnodes 1 --nproc_per_node=4 python tools/fit.py cfg.yaml --amp", wd)
    assert L.script == "tools/fit.py"
    assert L.args == ["cfg.yaml", "--amp"]
    assert L.get("procs_per_node") == 4
    assert any("stray" in n for n in L.notes)


def test_interpreter_options_and_a_module_after_the_stray_interpreter_are_read(tmp_path):
    wd = Workdir(make_job(tmp_path, FILES))
    assert parse_launch("torchrun --nproc_per_node 2 python3 -u tools/fit.py -x", wd).script == "tools/fit.py"
    L = parse_launch("torchrun --nproc_per_node 2 python -m pkg.run --lr 1", wd)
    assert L.script == "pkg/run.py"
    assert L.args == ["--lr", "1"]


def test_a_workdir_script_named_like_an_interpreter_stays_the_entry(tmp_path):
    wd = Workdir(make_job(tmp_path, {**FILES, "python": "#!/usr/bin/env python\nimport torch\n"}))
    L = parse_launch("torchrun --nproc_per_node 2 python tools/fit.py", wd)
    assert L.script == "python"
