"""The parameter count a repository's README table states for the config file a run trains.

Research repositories built on config-file toolboxes (OpenMMLab-style segmentation, pose and video
codebases) publish a results table per method, in the README beside the configs, in the code folder or at
the root, with a `Params` column and, per row, a link to the config file or a name assembled from the same
parts as the config's file name (`Net-B_512x512_4x8_160k` for `net_base_512x512_160k_4x8_ade20k.py`). The
row for the config named on the command line gives the size the authors counted for the whole model
(decoder heads and adapters included), which a backbone's dimensions alone undercount.

A row is taken when it links to the config file itself, or when it shares more of the config name's parts
than any other row (at least three, and half of them), with a single-letter size (`-T`, `-S`, `-B`, `-L`)
read as the word a file name spells (`tiny`, `small`, `base`, `large`). Rows that tie must agree on the
value. Counts without a unit are millions, the vision-table convention; `Tunable`/`Trainable` columns are
not the model's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import PurePosixPath

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.readme_tables import LINK, count_cell, read_readme, readmes_up_from, tables

_SIZE_LETTER = {"t": "tiny", "s": "small", "m": "medium", "b": "base", "l": "large", "h": "huge"}
CONFIG_SUFFIXES = (".py", ".yaml", ".yml", ".json")
MIN_SHARED = 3


@dataclass(frozen=True)
class ReadmeParams:
    value: float
    where: str
    """README path:line of the row"""
    row: str


def tokens(text: str) -> set[str]:
    """The parts of a name, lower-cased, with adjacent parts joined (`ResNet-50` also gives `resnet50`) and a
    size letter also read as its word."""
    parts = [p for p in re.split(r"[^a-z0-9.]+", text.lower()) if p and p != "."]
    parts = [p.strip(".") for p in parts if p.strip(".")]
    out = set(parts) | {a + b for a, b in pairwise(parts)}
    out |= {_SIZE_LETTER[p] for p in parts if p in _SIZE_LETTER}
    return out


def _linked(cells: list[str], basename: str) -> bool:
    return any(PurePosixPath(t.split("#")[0]).name == basename for c in cells for t in LINK.findall(c))


def readme_params(config: str, wd: Workdir) -> ReadmeParams | None:
    """The Params cell of the README row for `config` (workdir-relative), or None when no row is clearly its.
    The README nearest the config decides; one further up is read only when a nearer one has no row."""
    for readme in readmes_up_from(config, wd):
        if (text := read_readme(readme, wd)) and (got := _row_for(config, readme, text)) is not None:
            return got
    return None


def _row_for(config: str, readme: str, text: str) -> ReadmeParams | None:
    name = PurePosixPath(config).name
    stem = name.rsplit(".", 1)[0]
    want = tokens(stem) - {""}
    linked: list[ReadmeParams] = []
    scored: list[tuple[int, ReadmeParams]] = []
    for table in tables(text):
        if (col := table.params_column) is None:
            continue
        for line, cells in table.rows:
            if col >= len(cells) or (value := count_cell(cells[col], table.header[col])) is None:
                continue
            hit = ReadmeParams(value, f"{readme}:{line}", " | ".join(cells))
            if _linked(cells, name):
                linked.append(hit)
                continue
            words = [c for k, c in enumerate(cells) if k != col and not LINK.search(c)]
            have = set().union(*(tokens(c) for c in words)) if words else set()
            first = tokens(words[0]) if words else set()
            if any(re.search(r"[a-z]{2,}", t) for t in first & want):
                scored.append((len(want & have), hit))
    if linked:
        return linked[0] if len({h.value for h in linked}) == 1 else None
    if not scored:
        return None
    best = max(s for s, _ in scored)
    if best < MIN_SHARED or 2 * best < len(set(re.split(r"[^a-z0-9.]+", stem.lower())) - {""}):
        return None
    top = [h for s, h in scored if s == best]
    return top[0] if len({h.value for h in top}) == 1 else None


def run_config(configs: list[str], command: str) -> str | None:
    """The config file named on the command line (the first config read whose file name the command holds)."""
    for c in configs:
        if c.endswith(CONFIG_SUFFIXES) and PurePosixPath(c).name in command:
            return c
    return None


def params_fact(configs: list[str], launch_args: list[str], wd: Workdir) -> Fact | None:
    """The README-stated size of the config the command names, as a fact (or None)."""
    config = run_config(configs, " ".join(launch_args))
    if config is None or "supernet" in PurePosixPath(config).name.lower():
        # a one-shot NAS supernet holds every candidate's weights; the table's rows are the subnets searched
        return None
    if (got := readme_params(config, wd)) is None:
        return None
    return Fact(value=round(got.value), source="static", evidence=[got.where],
                note=f"the README table row for {PurePosixPath(config).name} states it")
