"""`model = to_gpu(Net(opt))` through a helper of the job's own that only moves its argument to a device: the model
is `Net(opt)`. A helper that may build or replace the model is not looked through. Fixtures are written for these
tests; every expected count is worked out by hand."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize import count_entry_model

from .codeprof_support import file_readers

SCRIPT = '''
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self, opt, n_items):
        super().__init__()
        self.emb = nn.Embedding(n_items, opt.dim)
        self.out = nn.Linear(opt.dim, opt.dim)


HELPER


def main():
    n_items = 50
    model = to_gpu(Ranker(opt, n_items))
'''

MOVER = '''
def to_gpu(thing):
    if torch.cuda.is_available():
        return thing.cuda()
    return thing
'''

REPLACER = '''
def to_gpu(thing):
    if torch.cuda.is_available():
        return nn.DataParallel(thing).cuda()
    return nn.Linear(4, 4)
'''


def _count(tmp_path: Path, helper: str) -> tuple[int, list[str]] | None:
    (tmp_path / "train.py").write_text(SCRIPT.replace("HELPER", helper))
    return count_entry_model(*file_readers(tmp_path, {"opt.dim": 8, "n_items": 50}), "train.py")


def test_a_model_moved_to_the_gpu_by_a_helper_of_the_job_is_counted(tmp_path: Path) -> None:
    got = _count(tmp_path, MOVER)
    # Embedding(50, 8) = 400, Linear(8, 8) = 72
    assert got is not None and got[0] == 400 + 72


def test_a_helper_that_may_return_another_module_is_not_looked_through(tmp_path: Path) -> None:
    assert _count(tmp_path, REPLACER) is None
