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
from schedmate.codeprof.readme_params import _LINK, _NOT_WHOLE_MODEL, _SEPARATOR, count_cell

MODEL_FLAGS = ("--model", "--arch", "--model-name", "--model_name", "--model-type", "--model_type", "-a")
MODEL_SETTINGS = ("model", "arch", "model_name", "model_type")
_PARAMS_HEADER = re.compile(r"^[#*\s]*param(?:eter)?s?\b", re.IGNORECASE)  # of a header without markup
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


def _plain(cell: str) -> str:
    cell = re.sub(r"<[^>]+>", "", cell)
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)
    return cell.replace("`", "").replace("*", "").strip()


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _names_it(cells: list[str], name: str) -> bool:
    want = _norm(name)
    if any(_norm(_plain(c)) == want for c in cells):
        return True
    part = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
    return any(part.search(PurePosixPath(t.split("#")[0]).name) or part.search(t.split("#")[0])
               for c in cells for t in _LINK.findall(c))


def stated_rows(text: str, name: str) -> list[tuple[int, float]]:
    """(1-based line, params) of the markdown-table rows of `text` that name `name`."""
    lines = text.splitlines()
    out: list[tuple[int, float]] = []
    i = 0
    while i < len(lines) - 1:
        if "|" not in lines[i] or not _SEPARATOR.match(lines[i + 1]):
            i += 1
            continue
        header = [_plain(h) for h in _cells(lines[i])]
        cols = [k for k, h in enumerate(header) if _PARAMS_HEADER.match(h) and not _NOT_WHOLE_MODEL.search(h)]
        j = i + 2
        while j < len(lines) and "|" in lines[j] and lines[j].strip():
            cells = _cells(lines[j])
            if len(cols) == 1 and cols[0] < len(cells) and _names_it(
                    [c for k, c in enumerate(cells) if k != cols[0]], name) and (
                    v := count_cell(_plain(cells[cols[0]]), header[cols[0]])) is not None:
                out.append((j + 1, v))
            j += 1
        i = j
    return out


def _readmes(entry: str | None, wd: Workdir) -> list[str]:
    dirs = [""]
    if entry:
        parent = PurePosixPath(entry).parent
        dirs = [str(d) for d in [parent, *parent.parents]]
    out: list[str] = []
    for d in dirs:
        for name in ("README.md", "readme.md", "Readme.md"):
            rel = name if d in ("", ".") else f"{d}/{name}"
            if rel not in out and wd.exists(rel):
                out.append(rel)
    return out


def named_model_params(launch_args: list[str], params: Any, entry: str | None, wd: Workdir) -> Fact | None:
    """The README-stated size of the architecture the run names, as a fact (or None)."""
    name = model_name(launch_args, params)
    if name is None:
        return None
    hits: list[tuple[str, float]] = []
    for readme in _readmes(entry, wd):
        try:
            text = wd.read_text(readme)
        except (ValueError, OSError):
            continue
        hits += [(f"{readme}:{line}", v) for line, v in stated_rows(text or "", name)]
    if not hits or len({v for _, v in hits}) != 1:
        return None
    return Fact(value=round(hits[0][1]), source="static", evidence=[w for w, _ in hits],
                note=f"the README table row for the model {name!r} states it")
