"""Lightning Trainer settings that live in a config section, and Lightning's own defaults.

- `pl.Trainer(**cfg.train.pl_trainer)`, `params = cfg.lightning.trainer.params; pl.Trainer(**params)`,
  `self._exp_cfg = cfg.experiment; Trainer(**self._exp_cfg.trainer)`: the Trainer's arguments are the keys
  of that config section, wherever the section sits in the YAML. Its Lightning keywords (`gpus`, `devices`,
  `max_epochs`, `accumulate_grad_batches`, ...) are copied under `trainer.<key>`, where the Trainer readers
  look, at the layer and place the config gave them.
- `LightningCLI(...)` imported from `lightning.pytorch` (Lightning 2.x), whose config and command line set
  neither `trainer.devices` nor `trainer.gpus`: the Trainer's default `devices="auto"` takes every visible
  GPU, so the GPU count is left to submission (recorded as `trainer.devices: auto` at the code-default layer).
  `pytorch_lightning` 1.x defaulted to one CPU process instead, so its import alone decides nothing.
- A batch size given per split (`batch_size: {train: 512, val: 256, test: 256}`): the training loader's is
  the `train` one, also stored under the `batch_size` key itself.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from schedmate.codeprof.params import CODE_DEFAULT, CONFIG
from schedmate.codeprof.static.names import LIGHTNING_KW

MAX_FILES = 400
"""bound on the files searched for a `Trainer(**section)` call"""
_BATCH_LEAF = re.compile(r"^(?:\w*_)?(?:batch_size|bs)$")


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def trainer_spreads(text: str) -> list[tuple[int, str]]:
    """(line, dotted source) of each `Trainer(**<name or attribute>)` keyword spread in a file, with names
    assigned one attribute path in the same file (`params = cfg.lightning.trainer.params`, `self._cfg = cfg.experiment`)
    replaced by what they were assigned."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    assigned: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            tgt, val = _dotted(node.targets[0]), _dotted(node.value)
            if tgt is not None:
                assigned.setdefault(tgt, []).append(val or "")
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = _dotted(node.func) or ""
        if func.rsplit(".", 1)[-1] != "Trainer":
            continue
        for kw in node.keywords:
            src = _dotted(kw.value) if kw.arg is None else None
            if src is None:
                continue
            for _ in range(4):  # follow single assignments: `params = cfg.a.b` -> `cfg.a.b`
                head = next((h for h in sorted(assigned, key=len, reverse=True)
                             if src == h or src.startswith(f"{h}.")), None)
                named = {v for v in assigned.get(head or "", []) if v}
                if head is None or len(named) != 1:  # a later `params = OmegaConf.merge(params, ...)` adds no name
                    break
                src = named.pop() + src[len(head):]
            out.append((node.lineno, src))
    return out


def _section(params: Any, src: str) -> str | None:
    """The config section a dotted source names: its longest suffix (after the config object's own name) that
    is a section of the read configs."""
    parts = src.split(".")
    keys = [k for k, _ in params.items()]
    for i in range(1, len(parts)):
        cand = ".".join(parts[i:]).lower()
        if any(k.startswith(f"{cand}.") for k in keys):
            return cand
    return None


def copy_trainer_sections(params: Any, files: list[str], read_text: Any) -> list[str]:
    """Copy the Lightning keywords of every `Trainer(**section)` section in `files` under `trainer.<key>`;
    notes."""
    notes: list[str] = []
    for rel in files:
        text = read_text(rel) or ""
        if "Trainer(" not in text or "**" not in text:
            continue
        for line, src in trainer_spreads(text):
            sec = _section(params, src)
            if sec is None or sec == "trainer":
                continue
            copied = []
            for k in sorted(LIGHTNING_KW):
                got = params.get(f"{sec}.{k}")
                if got is None or got.key != f"{sec}.{k}" or got.layer < CONFIG:
                    continue
                cur = params.get(f"trainer.{k}")
                if cur is not None and cur.key == f"trainer.{k}" and cur.layer >= got.layer:
                    continue
                params.set(f"trainer.{k}", got.value, [*got.where, f"{rel}:{line}"], got.layer, leaf=False)
                copied.append(k)
            if copied:
                notes.append(f"Trainer(**{src}) at {rel}:{line}: {', '.join(copied)} from the config section {sec}")
    return notes


def lightning_cli_auto_devices(params: Any, py: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> str | None:
    """Record Lightning 2.x's `devices="auto"` for a LightningCLI job that sets no device count; the call's
    file:line, or None."""
    cli = [(rel, c) for rel, c in calls if c["func"].rsplit(".", 1)[-1] == "LightningCLI"]
    if not cli:
        return None
    rel, c = cli[0]
    imports = py.get(rel, {}).get("imports", [])
    if not any(i == "lightning" or i.startswith("lightning.") for i in imports):
        return None  # pytorch_lightning: 1.x trained on one CPU process unless told otherwise
    for k in ("devices", "gpus"):
        got = params.get(f"trainer.{k}")
        if got is not None and got.key == f"trainer.{k}" or params.get(k) is not None:
            return None
    params.set("trainer.devices", "auto", f"{rel}:{c['line']}", CODE_DEFAULT, leaf=False)
    return f"{rel}:{c['line']}"


def train_split_batches(params: Any) -> list[str]:
    """`...batch_size.train: 512` beside `.val`/`.test`: stored as `...batch_size` too; the keys set."""
    out = []
    for key, pv in params.items():
        head, _, last = key.rpartition(".")
        if last != "train" or not _BATCH_LEAF.match(head.rsplit(".", 1)[-1]) or pv.layer < CONFIG:
            continue
        if not isinstance(pv.value, int) or isinstance(pv.value, bool) or pv.value <= 0:
            continue
        cur = params.get(head)
        if cur is not None and cur.key == head and cur.layer >= pv.layer:
            continue
        params.set(head, pv.value, pv.where, pv.layer)
        out.append(head)
    return out
