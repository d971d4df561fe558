"""Plain-Python idioms model constructors use to pick their layers (pyfuncs.py), on fixtures written for these
tests: `isinstance` over a known value, `functools.partial` layer factories and string methods over a known
setting. Every expected count is worked out by hand in the test; an idiom that is not settled leaves no count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedmate.codeprof.static.modelsize import count_entry_model

from .codeprof_support import file_readers


def _count(tmp_path: Path, text: str, known: dict[str, Any] | None = None) -> tuple[int, list[str]] | None:
    (tmp_path / "train.py").write_text(text)
    return count_entry_model(*file_readers(tmp_path, known), "train.py")


STAGES = '''
import torch.nn as nn


def as_tuple(v, n):
    return v if isinstance(v, tuple) else (v,) * n


class Tower(nn.Module):
    def __init__(self, widths=(16, 32), depth=1):
        super().__init__()
        depths = as_tuple(depth, len(widths))
        layers = []
        for w, d in zip(widths, depths):
            for _ in range(d):
                layers.append(nn.Linear(w, w))
        self.body = nn.Sequential(*layers)


model = Tower(widths=(16, 32), depth=DEPTH)
'''


def test_a_width_given_as_one_number_or_a_tuple_is_told_apart_by_isinstance(tmp_path: Path) -> None:
    got = _count(tmp_path, STAGES.replace("DEPTH", "2"))
    # depth 2 -> (2, 2): two Linear(16,16) = 2*272, two Linear(32,32) = 2*1056
    assert got is not None and got[0] == 2 * 272 + 2 * 1056
    got = _count(tmp_path, STAGES.replace("DEPTH", "(1, 3)"))
    assert got is not None and got[0] == 272 + 3 * 1056


def test_isinstance_over_a_setting_known_only_at_run_time_leaves_no_count(tmp_path: Path) -> None:
    assert _count(tmp_path, STAGES.replace("DEPTH", "args.depth")) is None


def test_isinstance_over_a_command_line_setting_the_resolver_knows_is_settled(tmp_path: Path) -> None:
    got = _count(tmp_path, STAGES.replace("DEPTH", "args.depth"), {"args.depth": 3})
    assert got is not None and got[0] == 3 * 272 + 3 * 1056


PARTIAL_NORM = '''
from functools import partial

import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.norm = norm_layer(dim)
        self.proj = nn.Linear(dim, dim)


class Encoder(nn.Module):
    def __init__(self, dim=24, depth=3, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.blocks = nn.ModuleList([Block(dim, norm_layer=norm_layer) for _ in range(depth)])
        self.norm = norm_layer(dim)


model = Encoder(dim=24, depth=3)
'''


def test_a_norm_layer_made_with_functools_partial_is_built_with_its_fixed_arguments(tmp_path: Path) -> None:
    got = _count(tmp_path, PARTIAL_NORM)
    # each block: LayerNorm(24) = 48, Linear(24, 24) = 600; three blocks and a final LayerNorm
    assert got is not None and got[0] == 3 * (48 + 600) + 48


PARTIAL_UNKNOWN = '''
from functools import partial

import torch.nn as nn
import somewhere_else


class Head(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        make = partial(somewhere_else.FancyNorm, eps=1e-5)
        self.norm = make(dim)
        self.fc = nn.Linear(dim, 2)


model = Head()
'''


def test_a_partial_over_a_layer_from_outside_the_job_leaves_no_count(tmp_path: Path) -> None:
    assert _count(tmp_path, PARTIAL_UNKNOWN) is None


ARCH_NAME = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, arch="wide_small"):
        super().__init__()
        width = 64 if arch.startswith("wide") else 16
        depth = int(arch.split("_")[-1] == "small") + 1
        self.layers = nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])


model = Net(arch=args.arch)
'''


def test_string_methods_over_an_architecture_setting_pick_the_widths(tmp_path: Path) -> None:
    got = _count(tmp_path, ARCH_NAME, {"args.arch": "wide_small"})
    assert got is not None and got[0] == 2 * (64 * 64 + 64)
    got = _count(tmp_path, ARCH_NAME, {"args.arch": "thin_large"})
    assert got is not None and got[0] == 16 * 16 + 16
    assert _count(tmp_path, ARCH_NAME) is None  # the setting is not known: no count


BLOCKS = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=10):
        super().__init__()
        with torch.no_grad():
            self.stem = nn.Linear(width, width)
        try:
            self.head = nn.Linear(width, 1)
        finally:
            self.out = nn.Identity()


model = Net(width=10)
'''


def test_layers_built_inside_with_and_try_blocks_are_counted(tmp_path: Path) -> None:
    got = _count(tmp_path, BLOCKS)
    assert got is not None and got[0] == (10 * 10 + 10) + (10 + 1)


def test_a_try_block_whose_body_cannot_be_followed_leaves_no_count(tmp_path: Path) -> None:
    text = BLOCKS.replace("self.head = nn.Linear(width, 1)", "self.head = build_fast_head(width)")
    text = text.replace("        finally:", "        except ImportError:\n            self.head = nn.Linear(width, 1)\n        finally:")
    assert _count(tmp_path, text) is None
