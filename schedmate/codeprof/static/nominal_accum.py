"""Accumulation toward a nominal batch: `accumulate = max(1, round(64 / batch_size))` (detectors that keep the
effective batch near a fixed size whatever batch fits on the GPUs) accumulates that many batches per step."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int

# `max(1, round(64 / self.batch_size))`, `max(round(nbs / bs), 1)`, with an optional `int(...)` around round
_NOMINAL = re.compile(
    r"max\(\s*(?:1\s*,\s*)?(?:int\(\s*)?round\(\s*(?P<nbs>[\w.]+)\s*/\s*(?P<bs>[\w.]+)\s*\)\s*\)?\s*(?:,\s*1\s*)?\)")
_ACCUM_TARGET = re.compile(r"accum", re.IGNORECASE)


def nominal_accumulation(sp: Any) -> tuple[int, list[str]] | None:
    """The accumulation an assignment to an `accum...` name computes as the nominal batch over the batch
    (`self.accumulate = max(1, round(64 / self.batch_size))`), both read from the sources; None when no such
    assignment resolves or two give different counts. An assignment under a condition (a warm-up ramp) is
    left out."""
    hits: dict[int, list[str]] = {}
    for rel, s in sp.r.py.items():
        for a in s["assigns"]:
            if a.get("when") or not _ACCUM_TARGET.search(a["target"].rsplit(".", 1)[-1]):
                continue
            m = _NOMINAL.fullmatch(a["expr"].strip())
            if m is None:
                continue
            ok_n, nbs, ev_n = sp._resolver.eval(m.group("nbs"))
            ok_b, bs, ev_b = sp._resolver.eval(m.group("bs"))
            nbs, bs = (to_int(nbs) if ok_n else None), (to_int(bs) if ok_b else None)
            if not nbs or not bs or nbs <= 0 or bs <= 0:
                continue
            hits.setdefault(max(1, round(nbs / bs)), [f"{rel}:{a['line']}", *ev_n, *ev_b])
    if len(hits) == 1:
        ((n, where),) = hits.items()
        return n, where
    return None
