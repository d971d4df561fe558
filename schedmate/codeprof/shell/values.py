"""How an unknown value travels through expansion (`\\x00NAME\\x00` marks), the workdir anchor for `$0`/`$PWD`, and the variable lookup the expander reads through."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

MARK = "\x00"
_BLANKS = re.compile(r"[\s\x00]+")


ROOT = "/__workdir__"


def anchored(rel: str) -> str:
    return f"{ROOT}/{rel}" if rel and rel != "." else ROOT


_IDENT = re.compile(r"[A-Za-z_]\w*")


_MARKED = re.compile("\x00([^\x00]*)\x00")


def unknown(name: str) -> str:
    # one word whatever it names (`$(scontrol show hostnames ...)`): field splitting must not cut it apart
    return MARK + _BLANKS.sub("_", name) + MARK


def is_unknown(text: str) -> bool:
    return MARK in text


def unknown_names(text: str) -> list[str]:
    return _MARKED.findall(text)


def readable(text: str) -> str:
    """`--nproc=$NGPU` for display: unknown pieces shown as their variable."""
    return _MARKED.sub(lambda m: f"${{{m.group(1)}}}", text)


class Unknown(Exception):
    def __init__(self, name: str = "?") -> None:
        super().__init__(name)
        self.name = name


@dataclass
class Lookup:
    """What expansion needs from the interpreter."""

    get: Callable[[str], str | None]
    """a scalar variable's value; None when unset"""
    get_array: Callable[[str], list[str] | None]
    set: Callable[[str, str], None]
    positional: Callable[[], list[str]]
    special: Callable[[str], str | None]
    """`0`, `#`, `?`, `$`, `!`, `PWD`, `BASH_SOURCE`: a value, or None when unknown"""
    cwd: Callable[[], str]
    used: set[str] = field(default_factory=set)
    read: Callable[[str], str | None] | None = None
    """a workdir file's text by a path as the script names it (for `grep ... file` pipelines); None: no reads"""
