"""`[[ $x == @(...) ]]` and `case` arms with bash's extended globs are decided as bash decides them."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.shell import interpret_command
from schedmate.codeprof.shell.patterns import matches
from tests.codeprof.codeprof_support import make_job

BRANCHING_LAUNCHER = {
    "tools/train.sh": """#!/usr/bin/env bash
CONFIG=$1
if [[ "$CONFIG" == @(*32xgpu*|*4node*) ]]; then
  NODES=4
elif [[ "$CONFIG" = +([a-z_])_8xgpu.py ]]; then
  NODES=1
else
  NODES=2
fi
torchrun --nnodes=$NODES --nproc_per_node=8 train.py $CONFIG
""",
    "train.py": "",
}


def nnodes(command: str, root: Path) -> str:
    run = interpret_command(command, Workdir(root))
    return next(a for a in run.execs[-1].argv if a.startswith("--nnodes="))


def test_an_extended_glob_in_a_double_bracket_test_picks_the_branch_bash_would(tmp_path):
    root = make_job(tmp_path, BRANCHING_LAUNCHER)
    assert nnodes("bash tools/train.sh cfg/owl_32xgpu.py", root) == "--nnodes=4"
    assert nnodes("bash tools/train.sh owl_net_8xgpu.py", root) == "--nnodes=1"
    assert nnodes("bash tools/train.sh cfg/owl_16xgpu.py", root) == "--nnodes=2"


def test_a_case_arm_with_an_extended_glob_is_matched(tmp_path):
    files = {"run.sh": """shopt -s extglob
case "$1" in
  @(tiny|small)) G=1 ;;
  *) G=8 ;;
esac
torchrun --nproc_per_node=$G train.py
""", "train.py": ""}
    root = make_job(tmp_path, files)
    assert interpret_command("bash run.sh small", Workdir(root)).execs[-1].argv[1] == "--nproc_per_node=1"
    assert interpret_command("bash run.sh large", Workdir(root)).execs[-1].argv[1] == "--nproc_per_node=8"


def test_extended_glob_operators_match_like_bash_and_negation_stays_undecided():
    assert matches("a_16xgpu.py", "@(*16xgpu*)") is True
    assert matches("a_8xgpu.py", "@(*16xgpu*)") is False
    assert matches("abbbc", "a+(b)c") is True and matches("ac", "a+(b)c") is False
    assert matches("ac", "a*(b)c") is True and matches("abc", "a?(b)c") is True
    assert matches("x.py", "*.py") is True and matches("a1", "a[0-9]") is True
    assert matches("x", "!(y)") is None
