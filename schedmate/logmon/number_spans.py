"""Where a line's numbers are, found once per digit shape and shared (the shapes reader's one scan per line).

`repeated_shapes._SPLIT` is digit-blind (`digit_blind.py`): it takes the same path through a line and through the
line's digit shape (ASCII digits 1-9 written as 0), so the spans of the numbers it finds are the same in both. A log
repeats a few shapes, so the regex runs once per shape and each line of it only has its numbers sliced out at the
cached places. The template (the line with each number written `#`) is the shape's too, unless a digit stands outside
the numbers (`fp16`, `conv2d`, which `_SPLIT` does not take for a number): then it is joined from the line's own text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_WHITESPACE = re.compile(r"\s+")
_ASCII_DIGIT = re.compile(r"[0-9]")


def collapse(template: str) -> str:
    """A template's whitespace runs as one space, stripped (a printable template has no other whitespace)."""
    if "  " in template or not template.isprintable():
        template = _WHITESPACE.sub(" ", template)
    return template.strip()


class NumberSpans:
    """Per digit shape: (slices of its numbers, its template or None when it must come from the line, whether
    every number is a plain float literal); None for a shape with no number or more than `max_fields`."""

    def __init__(self, split: re.Pattern[str], max_fields: int, max_shapes: int = 4096) -> None:
        self._split = split
        self._max_fields = max_fields
        self._max_shapes = max_shapes
        self._plans: dict[str, tuple[tuple[slice, ...], str | None, bool] | None] = {}

    def plan(self, shape: str) -> tuple[tuple[slice, ...], str | None, bool] | None:
        found = self._plans.get(shape, False)
        if found is not False:
            return found  # type: ignore[return-value]
        if len(self._plans) >= self._max_shapes:
            self._plans.clear()
        spans = tuple(slice(*m.span(1)) for m in self._split.finditer(shape))
        plan: tuple[tuple[slice, ...], str | None, bool] | None = None
        if spans and len(spans) <= self._max_fields:
            parts = _between(shape, spans)
            template = None if any(_ASCII_DIGIT.search(p) for p in parts) else collapse("#".join(parts))
            plain = True
            try:
                for s in spans:
                    float(shape[s])
            except ValueError:  # a clock, nan, inf: float literals keep their validity when digits change
                plain = False
            plan = (spans, template, plain)
        self._plans[shape] = plan
        return plan

    def template_of(self, text: str, shape: str, value: Callable[[str], float]
                    ) -> tuple[str, tuple[float, ...]] | None:
        """(template, values) of `text` whose digit shape is `shape` (same length); `value` reads a number that
        is not a plain float literal."""
        plan = self.plan(shape)
        if plan is None:
            return None
        spans, template, plain = plan
        if template is None:
            template = collapse("#".join(_between(text, spans)))
        found = map(text.__getitem__, spans)
        return template, tuple(map(float, found) if plain else map(value, found))


def _between(text: str, spans: tuple[slice, ...]) -> list[str]:
    """The text around the spans: before the first, between each two, after the last."""
    out, prev = [], 0
    for s in spans:
        out.append(text[prev:s.start])
        prev = s.stop
    out.append(text[prev:])
    return out
