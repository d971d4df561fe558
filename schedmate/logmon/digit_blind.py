"""Regexes whose answer does not depend on which digits a line holds, so that it can be cached per line shape.

A line's *digit shape* is the line with every ASCII digit 1-9 written as 0 (`ZEROS`). A regex is *digit-blind*
when each of its character tests accepts either every ASCII digit or none (`\\d`, `\\w`, `[\\d.,]`, `.`, but no
literal digit, no `[1-9]`, no `[^0]`) and it compares no text with an earlier group's (`\\1`). Such a regex
takes the same path through a line and through its digit shape, digit for digit: it finds a match in the line
exactly when it finds one in the shape (at the same place; only the matched digits differ). So whether it
fails on a line is known from the shape alone, and a log repeats a few shapes.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]

ZEROS = str.maketrans("123456789", "000000000")
_BYTE_ZEROS = bytes.maketrans(b"123456789", b"000000000")


def digit_shape(text: str) -> str:
    """`text.translate(ZEROS)`, ten times faster: in UTF-8 the bytes of ASCII digits stand for nothing else (every
    byte of a longer sequence is 0x80 or above), so translating the encoded bytes changes the same characters;
    `surrogatepass` carries a lone surrogate (text not decoded from UTF-8) through unchanged."""
    return text.encode("utf-8", "surrogatepass").translate(_BYTE_ZEROS).decode("utf-8", "surrogatepass")
_DIGITS = frozenset(range(48, 58))
_CATEGORY_DIGITS = {  # which ASCII digits each category accepts: all or none
    C.CATEGORY_DIGIT: True, C.CATEGORY_NOT_DIGIT: False, C.CATEGORY_WORD: True, C.CATEGORY_NOT_WORD: False,
    C.CATEGORY_SPACE: False, C.CATEGORY_NOT_SPACE: True, C.CATEGORY_LINEBREAK: False,
    C.CATEGORY_NOT_LINEBREAK: True,
}


def _set_blind(items: list) -> bool:  # type: ignore[type-arg]
    """A character class accepts every ASCII digit or none (negation keeps that)."""
    accepted: set[int] = set()
    for op, av in items:
        if op is C.NEGATE:
            continue
        if op is C.LITERAL:
            accepted |= {av} & _DIGITS
        elif op is C.RANGE:
            accepted |= set(range(max(av[0], 48), min(av[1], 57) + 1))
        elif op is C.CATEGORY:
            if av not in _CATEGORY_DIGITS:
                return False
            if _CATEGORY_DIGITS[av]:
                accepted |= _DIGITS
        else:
            return False
    return not accepted or accepted == _DIGITS


def _blind(seq: P.SubPattern | list) -> bool:  # type: ignore[type-arg]
    for op, av in seq:
        if op in (C.LITERAL, C.NOT_LITERAL):
            if 48 <= av <= 57:
                return False
        elif op is C.IN:
            if not _set_blind(av):
                return False
        elif op in (C.ANY, C.AT):
            continue
        elif op is C.BRANCH:
            if not all(_blind(b) for b in av[1]):
                return False
        elif op is C.SUBPATTERN:
            if not _blind(av[-1]):
                return False
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            if not _blind(av[2]):
                return False
        elif op in (C.ASSERT, C.ASSERT_NOT):
            if not _blind(av[1]):
                return False
        elif op is C.ATOMIC_GROUP:
            if not _blind(av):
                return False
        else:  # GROUPREF, GROUPREF_EXISTS, anything newer: not known to be blind
            return False
    return True


def digit_blind(regex: re.Pattern[str]) -> bool:
    """Whether `regex.search(line) is None` equals `regex.search(line.translate(ZEROS)) is None` for every
    line (module docstring). False when unsure."""
    try:
        return _blind(P.parse(regex.pattern, regex.flags))
    except Exception:  # noqa: BLE001 - a parser of another Python version: not known
        return False
