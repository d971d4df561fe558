"""A job's own class that only specialises a torch layer (a vendored synchronised batch norm, `class
SyncBN(_BatchNorm)`) counts as that layer; one that adds weights of its own leaves the model uncounted; an empty
slot in an `nn.ModuleList` (HRNet-style fuse layers) holds nothing. Fixtures are written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize import count_entry_model

from .codeprof_support import file_readers

SCRIPT = '''
import queue

import torch
import torch.nn as nn
from torch.nn.modules.batchnorm import _BatchNorm


class _SyncNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.01, affine=True):
        super().__init__(num_features, eps=eps, momentum=momentum, affine=affine)
        self._pipe = queue.Queue(4)
        self._copies = 0
EXTRA


class SyncNorm2d(_SyncNorm):
    def _check_input_dim(self, x):
        return x.dim() == 4


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.norm = SyncNorm2d(width)
        fuse = []
        for i in range(2):
            fuse.append(None if i == 0 else nn.Conv2d(width, width, 1, bias=False))
        self.fuse = nn.ModuleList(fuse)


model = Block(16)
'''


def _count(tmp_path: Path, extra: str = "") -> tuple[int, list[str]] | None:
    (tmp_path / "train.py").write_text(SCRIPT.replace("EXTRA", extra))
    return count_entry_model(*file_readers(tmp_path), "train.py")


def test_a_vendored_sync_batch_norm_counts_as_a_batch_norm_of_the_same_width(tmp_path: Path) -> None:
    got = _count(tmp_path)
    # Conv2d(16, 16, 3, bias=False) = 2304; the sync norm = BatchNorm2d(16) = 32; the fuse list: None and
    # Conv2d(16, 16, 1, bias=False) = 256
    assert got is not None and got[0] == 2304 + 32 + 256


def test_a_layer_subclass_that_adds_a_parameter_leaves_the_model_uncounted(tmp_path: Path) -> None:
    extra = "        self.gain = nn.Parameter(torch.ones(num_features))\n"
    assert _count(tmp_path, extra) is None
