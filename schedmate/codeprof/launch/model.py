"""What a launch asks for: the record every launcher family fills, and the option scanner they share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof.shell import is_unknown, unknown_names

PYTHONS = re.compile(r"^(python|python3|python3\.\d+|python2|pypy3?)$")


class LaunchError(ValueError):
    pass


@dataclass
class Setting:
    value: Any
    where: list[str]


@dataclass
class Launch:
    chain: list[str] = field(default_factory=list)
    """Launchers from outermost to innermost, e.g. ["sh:run.sh", "srun", "torchrun", "python"]."""
    script: str | None = None
    """Workdir-relative entry script."""
    module: str | None = None
    """`python -m` module, or a framework's command-line entry point (`llamafactory-cli train`)."""
    args: list[str] = field(default_factory=list)
    args_where: list[str] = field(default_factory=lambda: ["cmd"])
    base: str = ""
    """workdir-relative directory the entry runs in"""
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Setting] = field(default_factory=dict)
    """num_nodes, procs_per_node, num_procs, gpus_per_node (when a launcher states GPUs), and launcher
    options: mixed_precision, distributed_type, zero_stage, grad_accum, ds_config, acc_config, ..."""
    unknown: dict[str, list[str]] = field(default_factory=dict)
    """setting -> variables whose values the sources leave open (`--nproc_per_node $NGPU` with no value)"""
    files: list[str] = field(default_factory=list)
    """Workdir-relative files the launch read (wrapper scripts, hostfiles, launcher configs)."""
    notes: list[str] = field(default_factory=list)

    def put(self, key: str, value: Any, where: list[str] | str, override: bool = True, raw: Any = None) -> None:
        """Set a setting; with `raw` (the option's text) an unknown value is remembered with its variables."""
        if value is None:
            if isinstance(raw, str) and is_unknown(raw) and (override or key not in self.settings):
                self.unknown[key] = unknown_names(raw)
                self.settings.pop(key, None)
            return
        if override or key not in self.settings:
            self.settings[key] = Setting(value, [where] if isinstance(where, str) else list(where))
            self.unknown.pop(key, None)

    def get(self, key: str) -> Any:
        s = self.settings.get(key)
        return None if s is None else s.value


def to_int(v: Any) -> int | None:
    try:
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            return int(v) if float(v).is_integer() else None
        s = str(v).strip()
        return int(s) if re.fullmatch(r"[+]?\d+", s) else None
    except (TypeError, ValueError):
        return None


def is_program(tok: str) -> bool:
    base = PurePosixPath(tok).name
    return bool(
        tok.endswith((".py", ".sh"))
        or PYTHONS.match(base)
        or base in {"torchrun", "deepspeed", "accelerate", "bash", "sh", "srun", "mpirun", "mpiexec"}
    )


def option_value(toks: list[str], j: int) -> tuple[str, int]:
    """The value at toks[j] and the index after it. A documented command's placeholder set of alternatives
    (`--node_rank {0, 1, 2, 3}`: one of them per node) splits into several words in bash; it is one value, and
    the words after it are the launcher's next options, not the program."""
    if j >= len(toks):
        return "", j + 1
    k = j
    if toks[j].startswith("{") and "}" not in toks[j]:
        while k + 1 < len(toks) and "}" not in toks[k] and re.fullmatch(r"[\w.-]*,?}?", toks[k + 1]):
            k += 1
        if "}" not in toks[k]:
            k = j  # no closing brace: not a placeholder set
    return " ".join(toks[j : k + 1]), k + 1


def scan_options(
    toks: list[str],
    i: int,
    valued: set[str],
    flags: set[str],
    two_valued: set[str] = frozenset(),
) -> tuple[dict[str, str | bool], int]:
    """Options from toks[i:] up to the first positional token; returns (options, index of positional).

    Names are normalised (`--nproc-per-node` -> `nproc_per_node`, `-N` -> `N`)."""
    opts: dict[str, str | bool] = {}
    while i < len(toks):
        t = toks[i]
        if t == "--":
            return opts, i + 1
        if not t.startswith("-") or t == "-":
            break
        nxt_is_value = i + 1 < len(toks) and not toks[i + 1].startswith("-") and not is_program(toks[i + 1])
        if t.startswith("--"):
            name, eq, val = t[2:].partition("=")
            name = name.replace("-", "_")
            if eq:
                opts[name] = val
                i += 1
            elif name in two_valued:
                opts[name] = " ".join(toks[i + 1 : i + 3])
                i += 3
            elif name in flags:
                opts[name] = True
                i += 1
            elif name in valued or nxt_is_value:
                opts[name], i = option_value(toks, i + 1)
            else:
                opts[name] = True
                i += 1
        else:  # short option(s): -N 2, -N2, -n=4
            name = t[1:2]
            rest = t[2:]
            if len(t) > 2 and t[1:].replace("-", "_") in valued | flags | two_valued:
                name, rest = t[1:].replace("-", "_"), ""  # single-dash long options (-np, -npernode)
            if name in two_valued:
                opts[name] = " ".join(toks[i + 1 : i + 3])
                i += 3
            elif rest:
                opts[name] = rest.lstrip("=")
                i += 1
            elif name in flags:
                opts[name] = True
                i += 1
            elif name in valued or nxt_is_value:
                opts[name], i = option_value(toks, i + 1)
            else:
                opts[name] = True
                i += 1
    return opts, i


def combine(L: Launch) -> None:
    """Fill num_procs / num_nodes / procs_per_node from each other when two of them are known."""
    nn, pp, tot = L.get("num_nodes"), L.get("procs_per_node"), L.get("num_procs")
    if tot is None and nn is not None and pp is not None:
        L.put("num_procs", nn * pp, L.settings["num_nodes"].where + L.settings["procs_per_node"].where)
    elif pp is None and nn and tot is not None and tot % nn == 0:
        L.put("procs_per_node", tot // nn, L.settings["num_nodes"].where + L.settings["num_procs"].where)
    elif nn is None and pp and tot is not None and tot % pp == 0:
        L.put("num_nodes", tot // pp, L.settings["num_procs"].where + L.settings["procs_per_node"].where)
