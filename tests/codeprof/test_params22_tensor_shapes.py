"""A constructor that resizes its own position table from the shape of the parameter it already built
(`self.pos.size(1)`, slicing, `.transpose`, `.view`, `F.interpolate`, `torch.cat`) gets the resized table's exact
size; a size the run picks leaves it null.
Fixtures are written for these tests; every expected count is worked out by hand."""

from __future__ import annotations

from pathlib import Path

from tests.codeprof.codeprof_support import make_job as _write
from tests.codeprof.codeprof_support import params_of as _params

ENCODER = """
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self, img=32, patch=8, dim=24):
            super().__init__()
            self.patch = patch
            n = (img // patch) ** 2
            self.embed = nn.Conv2d(3, dim, patch, patch)
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos = nn.Parameter(torch.zeros(1, n + 1, dim))

        def resize_for(self, size, extra):
            import math
            side = int(math.sqrt(self.pos.size(1) - 1))
            cls_pos = self.pos[:, 0, :][:, None]
            grid = self.pos[:, 1:, :].transpose(1, 2)
            B, E, Q = grid.shape
            grid = grid.view(B, E, side, side)
            h, w = size[0] // self.patch, size[1] // self.patch
            grid = nn.functional.interpolate(grid, size=(h, w), mode="bicubic")
            grid = grid.flatten(2).transpose(1, 2)
            tokens = nn.init.trunc_normal_(torch.zeros(1, extra, E), std=0.02)
            self.extra = nn.Parameter(torch.zeros(1, extra, E))
            self.pos = nn.Parameter(torch.cat((cls_pos, grid, tokens), dim=1))


    class Detector(nn.Module):
        def __init__(self, extra, size):
            super().__init__()
            self.backbone = Encoder()
            self.backbone.resize_for(size, extra)
            self.box = nn.Linear(24, 4)
"""


def test_a_position_table_resized_from_its_own_shape_is_counted_at_its_new_size(tmp_path: Path) -> None:
    _write(tmp_path, {"enc.py": ENCODER, "train.py": """
        import argparse

        from enc import Detector

        parser = argparse.ArgumentParser()
        parser.add_argument("--queries", type=int, default=10)
        parser.add_argument("--epochs", type=int, default=3)
        args = parser.parse_args()
        model = Detector(args.queries, (48, 64))
    """})
    # embed 3*24*64 + 24 = 4632, cls 24, extra 10*24 = 240, box 24*4 + 4 = 100;
    # pos: 1 + (48//8)*(64//8) + 10 = 59 rows of 24 = 1416
    assert _params(tmp_path, "python train.py") == 4632 + 24 + 240 + 100 + 1416


def test_a_table_resized_to_a_size_the_run_picks_leaves_the_count_null(tmp_path: Path) -> None:
    _write(tmp_path, {"enc.py": ENCODER, "train.py": """
        import argparse

        import torch

        from enc import Detector

        parser = argparse.ArgumentParser()
        parser.add_argument("--queries", type=int, default=10)
        parser.add_argument("--epochs", type=int, default=3)
        args = parser.parse_args()
        size = torch.load("sizes.pt")
        model = Detector(args.queries, size)
    """})
    assert _params(tmp_path, "python train.py") is None
