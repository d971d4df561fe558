"""The parameter count a README table states for the architecture a run names with `--model NAME`.

Vision research repositories that train from their own timm-style `train.py`/`main.py` pick the network by a
registry name on the command line (`--model caformer_s18`, `--arch gfnet-xs`, `MODEL=van_b0 ... --model
$MODEL`) and publish a results table with a `Params` column whose rows name the same architectures: as the
name itself (`caformer_s18`, `` `gfnet-xs` ``), as a display spelling of it (`VAN-B0` for `van_b0`), or in the
row's checkpoint/config links (`.../iformer_small.pth`). That row is the authors' count of the model the run
trains, which the registry function's dimensions (often built through helpers the static reader cannot
follow) leave unknown.

A row is taken when one of its cells, stripped of markup, spells the name (case, `-` and `_` aside), or when
a link in it holds the name as a whole path part (`iformer_small` in `iformer_small.pth`, not in
`iformer_small_384.pth`). Every matching row of every README read must agree on the value; otherwise nothing
is stated. Counts without a unit are millions (the vision-table convention); `Tunable`/`Trainable` columns
are not the model's size. Only a run whose size is otherwise unknown takes it (`analyzer.finish`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.readme_tables import LINK, count_cell, plain, read_readme, readmes_up_from, tables

MODEL_FLAGS = ("--model", "--arch", "--model-name", "--model_name", "--model-type", "--model_type", "-a")
MODEL_SETTINGS = ("model", "arch", "model_name", "model_type")
_NAME = re.compile(r"^[A-Za-z][\w.-]*\d[\w.-]*$|^[A-Za-z][\w.-]*[_-][\w.-]+$")
"""a registry name worth matching: holds a digit or a `_`/`-` part (`van_b0`, `gfnet-xs`), not `resnet`"""


def model_name(launch_args: list[str], params: Any) -> str | None:
    """The architecture name the run selects: the last `--model NAME` (or `--model=NAME`) of the launch, else
    the resolved `model`/`arch` setting (a YAML `-c` default or the argparse default)."""
    found: str | None = None
    for i, a in enumerate(launch_args):
        flag, eq, val = a.partition("=")
        if flag in MODEL_FLAGS:
            found = val if eq else (launch_args[i + 1] if i + 1 < len(launch_args) else None)
    if found is None and params is not None:
        for key in MODEL_SETTINGS:
            held = params.get(key)
            if held is not None and isinstance(held.value, str):
                found = held.value
                break
    return found if found and _NAME.match(found) else None


def _norm(text: str) -> str:
    return re.sub(r"[-_\s]+", "_", text.strip().lower())


def _names_it(cells: list[str], name: str) -> bool:
    want = _norm(name)
    if any(_norm(plain(c)) == want for c in cells):
        return True
    part = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
    return any(part.search(PurePosixPath(t.split("#")[0]).name) or part.search(t.split("#")[0])
               for c in cells for t in LINK.findall(c))


def stated_rows(text: str, name: str) -> list[tuple[int, float]]:
    """(1-based line, params) of the markdown-table rows of `text` that name `name`."""
    out: list[tuple[int, float]] = []
    for table in tables(text):
        if (col := table.params_column) is None:
            continue
        for line, cells in table.rows:
            if col < len(cells) and _names_it([c for k, c in enumerate(cells) if k != col], name) and (
                    v := count_cell(cells[col], table.header[col])) is not None:
                out.append((line, v))
    return out


def named_model_params(launch_args: list[str], params: Any, entry: str | None, wd: Workdir) -> Fact | None:
    """The README-stated size of the architecture the run names, as a fact (or None)."""
    name = model_name(launch_args, params)
    if name is None:
        return None
    hits: list[tuple[str, float]] = []
    for readme in readmes_up_from(entry, wd):
        hits += [(f"{readme}:{line}", v) for line, v in stated_rows(read_readme(readme, wd), name)]
    if not hits or len({v for _, v in hits}) != 1:
        return None
    return Fact(value=round(hits[0][1]), source="static", evidence=[w for w, _ in hits],
                note=f"the README table row for the model {name!r} states it")
