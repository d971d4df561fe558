"""Bash pattern matching (`[[ $a == pat ]]`, `case`), extended globs included.

`fnmatch` knows `*`, `?` and `[...]` but reads bash's extended globs (`@(a|b)`, `?(x)`, `*(x)`, `+(x)`,
`!(x)`) as literal text, so `[[ $cfg == @(*16x*) ]]` was decided false for every value. Inside `[[ ]]` bash
(4.1+) matches them whether or not `shopt -s extglob` is on; `case` needs the option, which launch scripts
that use the syntax set. `!(...)` is answered as undecidable (None) rather than translated.
"""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

_EXT = {"@": "", "?": "?", "*": "*", "+": "+"}


def _closing(p: str, i: int) -> int:
    """Index of the `)` closing the group opened at p[i] == '(' (-1 when unbalanced)."""
    depth = 0
    for k in range(i, len(p)):
        if p[k] == "(":
            depth += 1
        elif p[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def split_alternatives(body: str) -> list[str]:
    """`a|b|@(c|d)` -> a, b, @(c|d): the `|` outside parentheses."""
    out, depth, start = [], 0, 0
    for k, c in enumerate(body):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(body[start:k])
            start = k + 1
    out.append(body[start:])
    return out


def _translate(p: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(p):
        c = p[i]
        if c in "@?*+!" and i + 1 < len(p) and p[i + 1] == "(":
            end = _closing(p, i + 1)
            if end < 0:
                return None
            if c == "!":
                return None
            alts = [_translate(a) for a in split_alternatives(p[i + 2:end])]
            if any(a is None for a in alts):
                return None
            out.append("(?:" + "|".join(alts) + ")" + _EXT[c])  # type: ignore[arg-type]
            i = end + 1
        elif c == "*":
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            end = p.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                out.append(fnmatch.translate(p[i:end + 1])[4:-3])  # fnmatch's class, without its anchors
                i = end + 1
        elif c == "\\" and i + 1 < len(p):
            out.append(re.escape(p[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    body = _translate(pattern)
    if body is None:
        return None
    try:
        return re.compile(f"(?s:{body})\\Z")
    except re.error:
        return None


def matches(word: str, pattern: str) -> bool | None:
    """Whether `word` matches the bash pattern (None when the pattern is one this reader does not decide)."""
    if not any(c in pattern for c in "@?*+!") or "(" not in pattern:
        return fnmatch.fnmatchcase(word, pattern)
    rx = _compiled(pattern)
    return None if rx is None else rx.match(word) is not None
