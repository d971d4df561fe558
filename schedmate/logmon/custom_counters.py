"""Progress prints of research code's own loops, kept apart from `rules.py` (which is full):

- a bare counter followed on the same line by a counter with its total (`iteration:3 step:200/1044, loss: 4.1`):
  the counter with the total is the main one, the bare one before it is the outer loop (`main_counter`);
- a bracketed fraction closing a line of named metrics, padded or not (`loss: 0.41 acc: 88.2 [ 2100/50000]`),
  the count advancing by any amount per line (samples, batches);
- a time over a named number of iterations (`100 iters took 31.2s`, `time for 50 iters: 15.1`): per iteration;
- a time column that is a running total in minutes or hours, or named total time (`elapsed 1.5m`, `total time:
  112.5s`), or a bare duration between pipes (`Iter 1200 | lr 3e-4 | 12.3s`): `time_column` reads it as the
  elapsed figure, and the tracker decides by how it moves whether it is a running total or the time of the
  interval since the previous print (`timing.interval_elapsed`);
- two counters named by a unit and a qualifier (`epoch_out: 1, epoch_in: 6, loss: ..`): the later one is the
  inner loop, the counter, and the earlier one its outer loop;
"""

from __future__ import annotations

import re

from schedmate.logmon.ingest import case_folds_as_lower
from schedmate.logmon.rules import F, Rule

_UNIT = r"(?:epoch|iter|iteration|step|batch)"

# a counter with its total later on the line than the bare counter a rule read: `iteration:1 step:100/1044`
_LATER_FRACTION = re.compile(rf"\b{_UNIT}s?\b[ :=#\[]*(\d+) ?(?:/|of) ?(\d+)\b", re.IGNORECASE)


_EPOCH_NAMED = re.compile(r"\bepoch\W{0,3}\d", re.IGNORECASE)


def main_counter(values: dict[str, float], text: str, after: int) -> dict[str, float]:
    """`values` with the main counter of a line whose rule read a bare counter (no total) while a counter with
    its total follows at or after `after`: that one is the step and the bare one the outer loop (epoch).
    Unchanged when there is no such fraction, or when the line names an epoch (then the bare counter is a
    global step beside the epoch's fraction, `epoch: 1, step: 5316, batch: 1565/1876`)."""
    if "step" not in values or "total_steps" in values or "epoch" in values or _EPOCH_NAMED.search(text):
        return values
    m = _LATER_FRACTION.search(text, after)
    if m is None or not 0 <= int(m[1]) <= int(m[2]):
        return values
    return {**values, "epoch": values["step"], "step": float(m[1]), "total_steps": float(m[2])}


_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "m": 60.0, "min": 60.0,
                 "mins": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hours": 3600.0}
_NAMED_ELAPSED = re.compile(r"\b(?:elapsed(?: time)?|time elapsed|total time|time so far)\b ?[:=]? ?(\d+(?:\.\d+)?) ?"
                            r"(ms|s|secs?|seconds|m|mins?|minutes|h|hr|hours)\b(?! ?/)", re.IGNORECASE)
_SEGMENT_DURATION = re.compile(r"\| *(\d+(?:\.\d+)?) ?(ms|s|secs?|seconds|mins?|minutes|h|hr|hours) *(?=\||$)",
                               re.IGNORECASE)


# a time that names how many iterations it covers: `100 iters took 31.2s`, `time for 50 iters: 15.1`, `time/100it 31.2s`
_PER_N = re.compile(r"\b(\d+) ?(?:it|iters?|iterations|steps|batches) took (\d+(?:\.\d+)?) ?(?:s|secs?|seconds)?\b"
                    r"|\btime (?:for|per|of) (\d+) ?(?:it|iters?|iterations|steps|batches)\W{1,3}(\d+(?:\.\d+)?)\b"
                    r"|\btime ?/ ?(\d+) ?(?:it|iters?|iterations|steps|batches)\W{1,3}(\d+(?:\.\d+)?)\b", re.IGNORECASE)


def time_column(text: str) -> dict[str, float]:
    """The time figure of a progress line in the shapes `tables.elapsed_figure` and `tables.rate_figures` leave
    (module docstring): a time over a named number of iterations as seconds per iteration (`s_it`), else the
    elapsed figure in seconds (`elapsed_s`); empty when there is none."""
    if "|" not in text and case_folds_as_lower(text):  # each pattern needs `took`, `time`, `elapsed` or a pipe
        low = text.lower()
        if "time" not in low and "took" not in low and "elapsed" not in low:
            return {}
    per_n = _PER_N.search(text)
    if per_n is not None:
        g = per_n.groups()
        n, v = next((int(a), float(b)) for a, b in zip(g[::2], g[1::2], strict=True) if a is not None)
        return {"s_it": v / n} if n > 0 else {}
    m = _NAMED_ELAPSED.search(text) or _SEGMENT_DURATION.search(text)
    if m is None:
        return {}
    return {"elapsed_s": float(m[1]) * _UNIT_SECONDS[m[2].lower()]}


def _p(name: str, pattern: str, needles: tuple[str, ...], **kw: object) -> Rule:
    return Rule(name=name, pattern=pattern, kind="progress", needles=needles, **kw)  # type: ignore[arg-type]


CUSTOM_PROGRESS_RULES: list[Rule] = [
    # named metrics, then the count in brackets closing the line: `loss: 0.41  acc: 88.2 [ 2100/50000]`
    _p("metrics-then-bracket-fraction", rf"^[^\n]*?\b(?:train_)?loss\b ?[:=] ?(?P<loss>{F})[^\n]*?\[ *(?P<step>\d+) ?/ ?"
       r"(?P<total_steps>\d+) *\]\s*$", ("loss",), ignore_case=True),
    # a counter opening the line, then fields between pipes: `Iter 1200 | lr 0.0003 | 12.3s`
    _p("counter-then-pipes", r"^(?:iter|iteration|step|batch)\b ?[#:]? ?(?P<step>\d+)(?: ?/ ?(?P<total_steps>\d+))? *\| ",
       ("iter", "step", "batch"), ignore_case=True),
    # two loops' counters named by a unit and a qualifier: `epoch_out: 1, epoch_in: 6, loss: 0.2`
    _p("qualified-nested-counters", rf"\b{_UNIT}_[a-z]\w*\b ?[:=] ?(?P<epoch>\d+) ?[,;|]? +{_UNIT}_[a-z]\w*\b ?[:=] ?"
       r"(?P<step>\d+)\b", ("_",), ignore_case=True),
]
