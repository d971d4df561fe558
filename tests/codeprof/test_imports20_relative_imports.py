"""Relative imports are resolved the way Python does: from the importing file's package, less `level - 1`
parents, for `from .x import y`, `from .. import x` and `from . import x`, and absolute imports of a
`python -m pkg.sub.train` entry's own package from where that package lives."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.pyast import analyze_python
from tests.codeprof.codeprof_support import make_job

# a package tree three levels deep; every value the run uses lives in a module the entry imports relatively
OPTIONS = """
    import argparse


    def build_parser():
        p = argparse.ArgumentParser()
        p.add_argument("--batch_size", type=int, default=24)
        p.add_argument("--epochs", type=int, default=7)
        return p
"""

TRAIN_CONFIG = """
    from dataclasses import dataclass


    @dataclass
    class SolverConfig:
        max_iters: int = 4500
"""

TRAIN = """
    import torch

    from ..common.options import build_parser
    from . import schedule

    args = build_parser().parse_args()
    cfg = schedule.SolverConfig()
    net = torch.nn.Linear(8, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        loss = net(torch.randn(args.batch_size, 8).cuda()).sum()
        loss.backward()
        opt.step()
"""

TREE = {
    "lab/__init__.py": "",
    "lab/common/__init__.py": "",
    "lab/common/options.py": OPTIONS,
    "lab/tasks/__init__.py": "",
    "lab/tasks/schedule.py": TRAIN_CONFIG,
    "lab/tasks/train.py": TRAIN,
}


def test_an_import_two_levels_up_is_read_from_the_grandparent_package(tmp_path):
    make_job(tmp_path, TREE)
    res = analyze_code(tmp_path, "python -m lab.tasks.train", use_llm=False)
    assert res.value("micro_batch_size") == 24


def test_a_module_imported_with_from_dot_import_is_read_from_the_importers_package(tmp_path):
    make_job(tmp_path, TREE)
    res = analyze_code(tmp_path, "python -m lab.tasks.train --batch_size 10", use_llm=False)
    assert res.value("train_steps") == 4500  # `max_iters` of the dataclass in lab/tasks/schedule.py
    assert res.value("micro_batch_size") == 10


def test_a_relative_import_is_never_taken_from_a_same_named_module_elsewhere(tmp_path):
    # the grandparent package has no `common/options.py`; the root's `common/options.py` is another module
    tree = {k.replace("lab/common/", "common/"): v.replace("default=24", "default=99") for k, v in TREE.items()}
    make_job(tmp_path, tree)
    res = analyze_code(tmp_path, "python -m lab.tasks.train", use_llm=False)
    assert res.value("micro_batch_size") is None


def test_a_relative_import_that_climbs_out_of_the_workdir_is_left_unread(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("..common.options", "...far.away")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("micro_batch_size") is None


def test_a_module_entry_under_src_reads_absolute_imports_of_its_own_package(tmp_path):
    tree = {f"src/{k}": v for k, v in TREE.items()}
    tree["src/lab/tasks/train.py"] = TRAIN.replace("from ..common.options", "from lab.common.options")
    make_job(tmp_path, tree)
    res = analyze_code(tmp_path, "python -m lab.tasks.train", use_llm=False)
    assert res.value("micro_batch_size") == 24


def test_the_import_records_keep_the_level_of_a_relative_import():
    s = analyze_python("from ..common.options import build_parser\nfrom . import schedule\nimport torch\n")
    assert s["imports"] == ["torch", ".", "..common.options", "..common.options.build_parser", ".schedule"]
