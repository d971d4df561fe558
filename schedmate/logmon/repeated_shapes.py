"""Progress read from the shape of the log itself, for print formats no rule knows (the twentieth real-log wave).

A training loop prints the same line again and again with only its numbers changed. With every number abstracted
(`step # loss = #, (# sec/step)`) those lines share one template; each number is a field of it, named by the words
before it (its key) and the unit written after it. Over the consecutive lines of one template:

- the counter is an integer field that grows on every line of the latest run: one whose key is a counter word
  (`iter`, `step`, `batch`, `update`) whatever its stride; else the numerator of a fraction whose denominator
  stays put on three lines or more (the denominator is then the total); else any other integer field that grows by one constant stride
  on three lines or more (`cycle 300`, `~ 1500 ~`). Epochs, sizes, losses, samples, files and percentages are never
  the counter, nor an index over things listed once each (classes, layers, buckets, folds), nor the count of a
  phase other than training (evaluation, embedding, extraction, generation);
- the time per increment of that counter comes from, in this order: a field whose unit or key says per
  iteration (`1.02 sec/step`, `step-time 0.06`) or a rate (`3.1 it/s`, inverted); the lines' time stamps
  (seconds between lines over the counter's growth); a time field that grows on every line with the counter (a
  running total, `Elapsed [8:37:01]`: its growth over the counter's); a time field that does not grow when the
  counter moves by one per line (then it is the time of that one iteration);
- it stays None when unsure: a plain time field over several iterations per line with no stamps (the interval's
  time or the last iteration's?), an ETA or time left, a data-loading or evaluation time, samples per second.

The monitor asks it only for what its rules left empty (`ShapeReader.fallback`), so no format is read twice.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import statistics
from collections import OrderedDict, deque

from schedmate.logmon.digit_blind import digit_shape
from schedmate.logmon.number_spans import NumberSpans

MAX_SHAPES = 256
"""Templates remembered (least recently seen dropped first)."""
MAX_FIELDS = 24
"""A line with more numbers than this is a data dump (an array, a table), not a progress print."""
RUN_MEMORY = 64
"""Lines kept per template."""
CUMULATIVE_SPREAD = 2.0
"""A running-total time column's growth per step agrees within this factor on every line."""

_FIELD = re.compile(
    r"(?<![\w.])(?:(?P<clock>\d{1,3}:\d\d:\d\d(?:[.,]\d+)?)|(?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<word>nan|inf(?:inity)?)(?![A-Za-z]))", re.IGNORECASE)
# `_FIELD` as one capturing group, for `split`: it starts with a character class (the regex engine then skips to
# candidate characters at once instead of trying the lookbehind at every one), and the lookbehind checks the
# character before that first one. Same matches as `_FIELD` (tests/logmon/test_fast_paths.py).
_EXP = r"(?:[eE][-+]?\d+)?"
_I = "iI\u0130\u0131"  # what `i` matches under IGNORECASE (dotted and dotless i too)
_SPLIT = re.compile(
    r"([-+.\dnN" + _I + r"](?<![\w.].)"
    r"(?:(?<=\d)(?:\d{0,2}:\d\d:\d\d(?:[.,]\d+)?|\d*\.\d*" + _EXP + r"|\d*" + _EXP + r")"
    r"|(?<=[-+])(?:\d+\.\d*|\.\d+|\d+)" + _EXP + r"|(?<=\.)\d+" + _EXP +
    r"|(?<=[nN])(?i:an(?![a-z]))|(?<=[" + _I + r"])(?i:nf(?:inity)?(?![a-z]))))")
_GLUED = re.compile(r"(?P<unit>[A-Za-z]+(?:/[A-Za-z]+)?|%)")
_SPACED_UNIT = re.compile(r" (?P<unit>(?:s|ms|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?)(?:/[A-Za-z]+)?|"
                          r"(?:it|its|iters?|steps?|batch(?:es)?)/s(?:ec)?)(?![\w/])", re.IGNORECASE)
_KEY = re.compile(r"([A-Za-z][\w\-]*(?:[ _/-][A-Za-z][\w\-]*){0,2})[^A-Za-z\d]*$")
_FRACTION = re.compile(r" ?(?:/|of) ?\d")

_SECONDS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "ms": 0.001, "min": 60.0, "mins": 60.0,
            "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0}
_COUNTER_KEY = re.compile(r"(?:^|[ _-])(?:iter|iters|iteration|iterations|step|steps|batch|batches|update|updates|it)$")
_EPOCH_KEY = re.compile(r"(?:^|[ _-])(?:epoch|epochs|ep)$")
_NOT_COUNTER = re.compile(r"loss|acc|lr|rate|size|dim|mem|gpu|rank|pid|seed|sample|token|example|record|image|img|"
                          r"byte|param|worker|thread|node|port|shape|top|score|reward|len|num|count|file|shard|id$|"
                          # an index over things listed once each, not a loop's progress (`class [3], IoU: 0.8`)
                          r"class|label|categor|layer|channel|head|level|bucket|fold|col|row|line|index|idx|item",
                          re.IGNORECASE)
_NOT_TRAINING = re.compile(r"eval|val|test|infer|predict|embed|extract|encod|decod|download|upload|load|prepro|prepar|"
                           r"search|generat|render|export|convert|warm", re.IGNORECASE)
_PER_ITER_UNIT = re.compile(r"^(?:s|secs?|seconds?|ms)/(?:it|iter|iteration|step|batch)$", re.IGNORECASE)
_RATE_UNIT = re.compile(r"^(?:it|its|iters?|steps?|batch(?:es)?)/s(?:ec)?$", re.IGNORECASE)
_PER_ITER_KEY = re.compile(r"(?:step|iter|iteration|batch)[ _-]?time$|time[ _/-]?per[ _-]?(?:step|iter|iteration|batch)$"
                           r"|secs?[ _]per[ _](?:step|iter|iteration|batch)$", re.IGNORECASE)
_RATE_KEY = re.compile(r"(?:steps|iters|it)[ _/-]?(?:per[ _-]?)?s(?:ec)?$", re.IGNORECASE)
_TIME_KEY = re.compile(r"(?:^|[ _-])(?:time|t|took|elapsed|duration|clock|cost|timer)$", re.IGNORECASE)
_RUNNING_TOTAL_KEY = re.compile(r"elapsed|total|clock|so far|since", re.IGNORECASE)
_NOT_TIME = re.compile(r"eta|remain|left|data|load|read|io\b|wait|forward|fwd|backward|bwd|eval|val|test|infer|comm|"
                       r"sync|epoch|save|ckpt|checkpoint", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Field:
    key: str
    unit: str
    integer: bool
    clock: bool
    numerator: bool  # followed by `/n` or `of n`: the next field is its total


@dataclasses.dataclass
class Shape:
    fields: tuple[Field, ...]
    rows: deque[tuple[int, float | None, tuple[float, ...]]]  # (line number, time stamp, values)


@dataclasses.dataclass(frozen=True)
class Reading:
    step: int
    total: int | None
    iteration_time_s: float | None
    lines: int


def _value(m: re.Match[str]) -> float:
    if m["clock"]:
        h, mi, s = m["clock"].replace(",", ".").split(":")
        return int(h) * 3600 + int(mi) * 60 + float(s)
    if m["word"]:
        return float("nan") if m["word"].lower() == "nan" else float("inf")
    return float(m["num"])


_WHITESPACE = re.compile(r"\s+")


def _field_value(f: str) -> float:
    """`_value` of one field matched by `_SPLIT`: a clock holds a colon, a word starts with n or i."""
    if ":" in f:
        h, mi, sec = f.replace(",", ".").split(":")
        return int(h) * 3600 + int(mi) * 60 + float(sec)
    if f[0] in "nN":
        return float("nan")
    if f[0] in _I:
        return float("inf")
    return float(f)


_SPANS = NumberSpans(_SPLIT, MAX_FIELDS)


def template_of(text: str, digits: str | None = None) -> tuple[str, tuple[float, ...]] | None:
    """`parse` without the fields: (template, values), or None. The fields (keys, units) are needed only for a
    template seen the first time (`ShapeReader.offer`). `_SPLIT` runs once per digit shape (`number_spans.py`);
    `digits`: the line's digit shape when the caller has it already."""
    text = text[:400]
    shape = digit_shape(text) if digits is None else digits[:400]
    return _SPANS.template_of(text, shape, _field_value)


def parse(text: str) -> tuple[str, tuple[Field, ...], tuple[float, ...]] | None:
    """(template, fields, values) of a line with one number or more (module docstring); None for a line with
    none or with more than MAX_FIELDS."""
    text = text[:400]
    ms = list(_FIELD.finditer(text))
    if not ms or len(ms) > MAX_FIELDS:
        return None
    fields: list[Field] = []
    parts: list[str] = []
    prev = 0
    for m in ms:
        before = text[prev:m.start()]
        parts.append(_WHITESPACE.sub(" ", before))
        key_m = _KEY.search(before)
        key = key_m[1].lower() if key_m else ""
        glued = _GLUED.match(text, m.end())
        spaced = _SPACED_UNIT.match(text, m.end())
        unit = (glued["unit"] if glued else spaced["unit"] if spaced else "").lower()
        fields.append(Field(key=key, unit=unit, integer=bool(m["num"]) and m["num"].lstrip("+-").isdigit(),
                            clock=bool(m["clock"]), numerator=bool(_FRACTION.match(text, m.end()))))
        parts.append("#")
        prev = m.end()
    parts.append(_WHITESPACE.sub(" ", text[prev:]).rstrip())
    return "".join(parts).strip(), tuple(fields), tuple(_value(m) for m in ms)


def _run(rows: list[tuple[int, float | None, tuple[float, ...]]], j: int) -> list[int]:
    """Indices of the latest run of rows over which field j grows on every row."""
    idx = [len(rows) - 1]
    for i in range(len(rows) - 2, -1, -1):
        if rows[i][2][j] < rows[idx[-1]][2][j]:
            idx.append(i)
        else:
            break
    return idx[::-1]


def _denominator(shape: Shape, j: int, run: list[int]) -> int | None:
    """The constant total after field j when j is a numerator (`12/500`), else None."""
    if not shape.fields[j].numerator or j + 1 >= len(shape.fields):
        return None
    tots = {shape.rows[i][2][j + 1] for i in run}
    tot = next(iter(tots))
    if len(tots) != 1 or tot != int(tot) or tot < shape.rows[run[-1]][2][j]:
        return None
    return int(tot)


def counter_of(shape: Shape) -> tuple[int, list[int], int | None] | None:
    """(field index, its latest growing run, its total or None) of the template's counter (module docstring)."""
    rows = list(shape.rows)
    if len(rows) < 2:
        return None
    numbered, fractions, strided = [], [], []
    for j, f in enumerate(shape.fields):
        denominator_of_previous = j > 0 and shape.fields[j - 1].numerator
        if not f.integer or f.unit or denominator_of_previous or _EPOCH_KEY.search(f.key) or _NOT_TRAINING.search(f.key):
            continue  # a phase other than training (`Embedding pass: [40/120]`, `val step 3`) is no training counter
        run = _run(rows, j)
        if len(run) < 2 or rows[run[-1]][2][j] < 0:
            continue
        if _COUNTER_KEY.search(f.key):
            numbered.append((j, run))
        elif _NOT_COUNTER.search(f.key):
            continue
        elif len(run) >= 3 and (total := _denominator(shape, j, run)) is not None:
            fractions.append((j, run, total))
        elif len(run) >= 3 and len({rows[b][2][j] - rows[a][2][j] for a, b in itertools.pairwise(run)}) == 1:
            strided.append((j, run))
    if numbered:
        j, run = numbered[0]
        return j, run, _denominator(shape, j, run)
    if fractions:
        return fractions[0]
    if strided:
        j, run = strided[0]
        return j, run, None
    return None


def _seconds(f: Field, v: float) -> float:
    unit = f.unit.split("/")[0]
    return v * _SECONDS.get(unit, 1.0)


def iteration_time(shape: Shape, j: int, run: list[int]) -> float | None:
    """Seconds per increment of counter field j over its run (module docstring), or None."""
    rows = [shape.rows[i] for i in run]
    steps = [r[2][j] for r in rows]
    strides = [b - a for a, b in itertools.pairwise(steps)]
    others = [(k, f) for k, f in enumerate(shape.fields) if k != j and not (k == j + 1 and shape.fields[j].numerator)]
    for k, f in others:  # a figure per iteration, or a rate
        vals = [r[2][k] for r in rows]
        if any(not v > 0 or v == float("inf") for v in vals):
            continue
        if _PER_ITER_UNIT.match(f.unit) or (not f.unit or f.unit in _SECONDS) and _PER_ITER_KEY.search(f.key):
            return statistics.median(_seconds(f, v) for v in vals)
        if _RATE_UNIT.match(f.unit) or not f.unit and _RATE_KEY.search(f.key):
            return statistics.median(1.0 / v for v in vals)
    stamps = [(r[1], s) for r, s in zip(rows, steps, strict=True) if r[1] is not None]
    per = [(tb - ta) / (sb - sa) for (ta, sa), (tb, sb) in itertools.pairwise(stamps) if tb > ta]
    if per:
        whole = all(t == int(t) for t, _ in stamps)
        if not whole or statistics.median(tb - ta for (ta, _), (tb, _) in itertools.pairwise(stamps)) >= 2.0:
            return statistics.median(per)
    for k, f in others:  # a time column: a running total, or one iteration's time when each line is one step
        timed = f.clock or f.unit in _SECONDS or (not f.unit and _TIME_KEY.search(f.key) is not None)
        if not timed or _NOT_TIME.search(f.key):
            continue
        vals = [_seconds(f, r[2][k]) for r in rows]
        if any(not v >= 0 or v == float("inf") for v in vals):
            continue
        growth = [(b - a) / s for (a, b), s in zip(itertools.pairwise(vals), strides, strict=True)]
        if len(growth) >= 2 and min(growth) > 0 and max(growth) <= CUMULATIVE_SPREAD * min(growth):
            return statistics.median(growth)
        if f.clock or _RUNNING_TOTAL_KEY.search(f.key) or set(strides) != {1} or min(vals) <= 0:
            continue  # a running total that did not grow steadily, or several iterations per line
        if len(vals) >= 3 and (all(b > a for a, b in itertools.pairwise(vals)) or all(b < a for a, b in itertools.pairwise(vals))):
            continue  # rising or falling on every line: a total or a countdown, not one iteration's time
        return statistics.median(vals)
    return None


class ShapeReader:
    """Remembers the recent lines of each template and answers, at report time, with the counter and the time
    per step of the best template (module docstring)."""

    def __init__(self) -> None:
        self._shapes: OrderedDict[str, Shape] = OrderedDict()
        self._last: Shape | None = None

    def offer(self, lineno: int, text: str, ts: float | None, digits: str | None = None) -> None:
        """Take one line (any line; a template seen once costs one entry until it is pushed out); `digits`: its
        digit shape, when the caller has it."""
        parsed = template_of(text, digits)
        self._last = None
        if parsed is None:
            return
        template, values = parsed
        shape = self._shapes.get(template)
        if shape is None:  # the fields only for a new template: a template keeps those of its first line
            full = parse(text)
            assert full is not None
            shape = self._shapes[template] = Shape(full[1], deque(maxlen=RUN_MEMORY))
            if len(self._shapes) > MAX_SHAPES:
                self._shapes.popitem(last=False)
        else:
            self._shapes.move_to_end(template)
        shape.rows.append((lineno, ts, values))
        self._last = shape

    def last_is_progress(self) -> bool:
        """Whether the line offered last belongs to a template whose counter grew on it (a progress print)."""
        found = counter_of(self._last) if self._last is not None else None
        return found is not None and self._last is not None and found[1][-1] == len(self._last.rows) - 1

    def fallback(self, step: int | None = None) -> Reading | None:
        """The reading of the template with a counter seen on the most lines (when `step` is given, only a
        template whose counter ended at that value: the counter a rule already read), else None."""
        best: Reading | None = None
        for shape in self._shapes.values():
            found = counter_of(shape)
            if found is None:
                continue
            j, run, total = found
            last = int(shape.rows[run[-1]][2][j])
            if step is not None and last != step:
                continue
            reading = Reading(step=last, total=total, iteration_time_s=iteration_time(shape, j, run), lines=len(run))
            if best is None or reading.lines > best.lines:
                best = reading
        return best
