"""`test` / `[` / `[[` evaluated over expanded words: true, false, or None when a value is unknown."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.shell.expand import (
    is_unknown,
    unknown_names,
)
from schedmate.codeprof.shell.patterns import matches
from schedmate.codeprof.shell.state import (
    _State,
)


class _TestExpr:
    """`test` / `[` / `[[` expressions over expanded words: True, False, or None when undecidable."""

    UNARY_STR = {"-z", "-n"}
    UNARY_FILE = {"-f", "-e", "-d", "-s", "-r", "-w", "-x", "-L", "-h"}
    BINARY = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~"}

    def __init__(self, words: list[str], interp: Any, st: _State, double: bool) -> None:
        self.w = words
        self.i = 0
        self.interp, self.st, self.double = interp, st, double

    def run(self) -> bool | None:
        if not self.w:
            return False
        v = self.or_()
        return v if self.i >= len(self.w) else None

    def _is(self, *ops: str) -> bool:
        return self.i < len(self.w) and self.w[self.i] in ops

    def or_(self) -> bool | None:
        left = self.and_()
        while self._is("||", "-o"):
            self.i += 1
            right = self.and_()
            left = True if (left is True or right is True) else (None if None in (left, right) else False)
        return left

    def and_(self) -> bool | None:
        left = self.not_()
        while self._is("&&", "-a"):
            self.i += 1
            right = self.not_()
            left = False if (left is False or right is False) else (None if None in (left, right) else True)
        return left

    def not_(self) -> bool | None:
        if self._is("!"):
            self.i += 1
            v = self.not_()
            return None if v is None else not v
        return self.primary()

    def primary(self) -> bool | None:
        w = self.w
        if self._is("("):
            self.i += 1
            v = self.or_()
            if self._is(")"):
                self.i += 1
            return v
        if self.i + 2 < len(w) and w[self.i + 1] in self.BINARY:
            a, op, b = w[self.i], w[self.i + 1], w[self.i + 2]
            self.i += 3
            return self.binary(a, op, b)
        if w[self.i] in self.UNARY_STR | self.UNARY_FILE and self.i + 1 < len(w):
            op, a = w[self.i], w[self.i + 1]
            self.i += 2
            return self.unary(op, a)
        a = w[self.i]
        self.i += 1
        return None if is_unknown(a) else a != ""

    def unary(self, op: str, a: str) -> bool | None:
        if is_unknown(a):
            return None
        if op == "-z":
            return a == ""
        if op == "-n":
            return a != ""
        rel = self.interp.files.rel(a, self.st.cwd)
        if rel is None:
            return None  # outside the workdir: a data path, a system file: unknowable here
        if op == "-d":
            return self.interp.files.is_dir(rel)
        if op in ("-f", "-e", "-s", "-r"):
            return self.interp.files.exists(rel) or (op == "-e" and self.interp.files.is_dir(rel)) or None
        return None

    def binary(self, a: str, op: str, b: str) -> bool | None:
        if is_unknown(a) or is_unknown(b):
            return None
        if op in ("=", "=="):
            return matches(a, b) if self.double else a == b
        if op == "!=":
            if not self.double:
                return a != b
            hit = matches(a, b)
            return None if hit is None else not hit
        if op == "=~":
            try:
                return re.search(b, a) is not None
            except re.error:
                return None
        if op in ("<", ">"):
            return a < b if op == "<" else a > b
        try:
            x, y = int(a), int(b)
        except ValueError:
            return None
        return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[op]


def names_unknown(words: list[str]) -> list[str]:
    """Variables whose unknown values reached these words (for `why null` notes)."""
    out: list[str] = []
    for w in words:
        for n in unknown_names(w):
            if n not in out:
                out.append(n)
    return out
