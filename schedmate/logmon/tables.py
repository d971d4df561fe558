"""Progress from structured prints that a one-line rule cannot read: key/value lines, key/value blocks and
tables; and the framework's own rate figures on any progress line.

- **Inline key/value lines**: `<epoch: 30, iter: 2,800, lr:1.0e-04> l_pix: 3.2e-03`,
  `iteration=120 loss=2.31 time=0.5`: two or more `key: number` / `key=number` pairs, one of them a step
  counter.
- **Key/value blocks**, one pair a line, read until the block ends (a ruler line, a blank line, a line of
  another shape): Stable-Baselines3 (`|    iterations   | 19519 |`), Ray Tune results (`training_iteration:
  316` in a YAML block).
- **Tables with a header row**: `| Iteration | Loss | Elapsed Time |` then one row per step; Ray's status
  table (`| Trial name | status | ... | iter | total time (s) | ...`).

A block, line or row becomes a progress event when it names a step counter and a loss or a time figure (a
configuration dump with `iter: 1000` and `lr: 0.1` is not a step). Block lines must be adjacent (a line a
rule matched ends the block), and a line with error words is never taken.
Keys are compared, after lower-casing and turning separators into `_`, against fixed vocabularies that map
them to `rules.FIELDS` names; nothing else of the text is interpreted (log text is untrusted data).
Running totals of time (`time_elapsed`, `total time (s)`, `Elapsed Time`) become `elapsed_s`, from which the
progress tracker takes the time per step.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from schedmate.logmon.ingest import LogLine, case_folds_as_lower

_NUM = r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"

STEP_KEYS: tuple[str, ...] = ("training_iteration", "iterations", "iteration", "iter", "iters", "global_step",
                              "step", "num_updates", "n_iter", "train_step", "global_steps", "update", "updates", "nupdates",
                              "batch_id", "batch_idx", "step_id", "iter_id", "episode")
"""Keys of a step counter, best first (a block with several takes the first in this order); an RL loop's
`episode` counts only when no step counter is beside it."""
BRACKET_KEY = "_bracket"
COUNTED_KEYS: tuple[str, ...] = ("batch", "batches", BRACKET_KEY)
"""Keys that are a step counter only with a total (`batch (100/4495)`, a bare `[2087/7312]`): `batch: 32` alone is
a batch size."""
KEY_FIELDS: dict[str, str] = {
    **{k: "epoch" for k in ("epoch", "ep")},
    **{k: "loss" for k in ("loss", "train_loss", "total_loss", "loss_total", "training_loss")},
    **{k: "lr" for k in ("lr", "learning_rate", "cur_lr")},
    **{k: "elapsed_s" for k in ("time_elapsed", "time_total_s", "total_time_s", "elapsed_time", "elapsed",
                                "elapsed_s", "elapsed_time_s", "wall_time", "walltime", "time_since_start")},
    **{k: "s_it" for k in ("time_this_iter_s", "iter_time", "step_time", "time_per_iter", "time_per_step",
                           "sec_per_iter", "s_it", "sec_it", "batch_time", "time", "time_data", "avg_batch_cost",
                           "batch_cost", "seconds", "timer", "avg_time")},
    **{k: "ms_it" for k in ("step_time_ms", "iter_time_ms", "time_per_iter_ms", "ms_per_step", "ms_it")},
    **{k: "it_s" for k in ("it_s", "steps_per_second", "steps_per_sec", "global_step/sec", "iters_per_sec")},
    **{k: "total_steps" for k in ("total_steps", "max_steps", "max_iters", "max_iter", "total_iters")},
    **{k: "total_epochs" for k in ("total_epochs", "max_epochs", "num_epochs")},
}
_TIME_FIELDS = {"elapsed_s", "s_it"}
# a key that names a time per iteration whatever its wording: `elapsed_time_per_iteration_ms`, `train_step_time`
_PER_ITER_KEY = re.compile(r"per_(?:iter|iteration|step|batch)(?:_|$)|(?:^|_)(?:iter|step|batch)_time(?:_|$)")


def field_of_key(key: str) -> str | None:
    """The `rules.FIELDS` name of a normalised key: the vocabularies, then a key naming a time per iteration
    (milliseconds when it ends in `_ms`)."""
    fld = KEY_FIELDS.get(key)
    if fld is None and _PER_ITER_KEY.search(key) and "data" not in key:
        fld = "ms_it" if key.endswith("_ms") else "s_it"
    return fld

# keys bare or quoted (`loss=2.3`, `"train_loss": 2.3` in a JSON line)
# (a value may be quoted when it is a fraction: a JSON record's `"epoch": "3/400"`)
_INLINE = re.compile(rf"(?<![\w/.])[\"']?([A-Za-z_][\w/]*(?: \([a-z]+\))?)[\"']? ?[:=] *(?:[(\[]|\"(?=\d+/\d+\"))?({_NUM})"
                     rf"(?:/(\d+))?(?![\d:])")
_RULER = re.compile(r"^[\s|+]*[-=]{3}[-=+|\s]*$")
_PIPE_PAIR = re.compile(r"^\s*\|([^|]*)\|([^|]*)\|\s*$")
_COLON_PAIR = re.compile(r"^\s*([A-Za-z_][\w/ .()-]{0,60}?):(?: (.*))?$")
_LIST_ITEM = re.compile(r"^\s+- ")
_SECTION = re.compile(r"^ +[a-z_][a-z0-9_./]*:$")  # an indented YAML key opening a nested block: `  td_error:`
_VALUE = re.compile(rf"^\(?({_NUM})([KMG])? ?(ms|s|sec)?\)?$")
_SI = {"K": 1e3, "M": 1e6, "G": 1e9}
_HMS = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{2}(?:\.\d+)?)$")

MAX_BLOCK_LINES = 200


def norm_key(key: str) -> str:
    """`Total time (s)` -> `total_time_s`, `train/loss` -> `loss` (the last path part)."""
    k = re.sub(r"[^a-z0-9/]+", "_", key.lower()).strip("_")
    if "/" in k and k != "global_step/sec":
        k = k.rstrip("/").rsplit("/", 1)[-1]
    return k


def parse_value(text: str, fld: str | None = None) -> float | None:
    """A cell or value as a number: `1,234`, `1.36s`, `250ms` (seconds for time fields), `0:07:18.01`."""
    text = text.strip()
    m = _VALUE.match(text)
    if m is not None:
        try:
            v = float(m[1].replace(",", ""))
        except ValueError:
            return None
        if m[2]:  # `11.5K` (ms), `85.8G` (tokens)
            v *= _SI[m[2]]
        if m[3] == "ms" and fld in _TIME_FIELDS:
            v /= 1000.0
        return v
    if fld in _TIME_FIELDS:
        h = _HMS.match(text)
        if h is not None:
            return int(h[1] or 0) * 3600 + int(h[2]) * 60 + float(h[3])
    return None


_EVIDENCE = {"loss", "elapsed_s", "s_it", "ms_it", "it_s", "total_steps"}


EPOCH_LINE = "_epoch_line"
"""A value marking an epoch line (`Rule.epoch_counter`): the epoch is the counter while no step shows."""


def fields_of(pairs: list[tuple[str, str]], epoch_line: bool = False, evidence: bool = True) -> dict[str, float] | None:
    """Field values of key/value pairs, or None without a step counter and a loss or time figure (without
    `evidence`: the step counter alone will do). With `epoch_line`, pairs with a whole epoch and a loss but no
    step (a JSON line per epoch) are an epoch line."""
    step_key = next((k for k in STEP_KEYS if any(p[0] == k for p in pairs)), None)
    if step_key is None:  # `batch (100/4495)`, a bare `[2087/7312]`: a counter because it has a total
        step_key = next((k for k, v in pairs if k in COUNTED_KEYS and _FRACTION.match(v)), None)
        if step_key == BRACKET_KEY and not any(KEY_FIELDS.get(k) == "epoch" for k, _ in pairs):
            step_key = None  # a bare `[50/137]` is a within-epoch counter only beside its epoch (else: any bar)
    if step_key is None:
        if not epoch_line:
            return None
        vals = {KEY_FIELDS[k]: v for k, v in pairs if KEY_FIELDS.get(k) in ("epoch", "loss")}
        ep_text = vals.get("epoch", "").split("/")
        ep, loss = parse_value(ep_text[0]), parse_value(vals.get("loss", ""), "loss")
        if ep is None or loss is None or ep != int(ep) or ep < 0:
            return None
        out_ep = {"epoch": ep, "loss": loss, EPOCH_LINE: 1.0}
        if len(ep_text) == 2 and ep_text[1].isdigit() and int(ep_text[1]) >= ep:  # `"epoch": "3/400"`
            out_ep["total_epochs"] = float(ep_text[1])
        return out_ep
    out: dict[str, float] = {}
    for k, v in pairs:
        fld = "step" if k == step_key else field_of_key(k)
        if fld is None or fld in out:
            continue
        x = parse_value(v.split("/")[0] if fld in ("step", "epoch") else v, fld)
        if x is None or not (math.isfinite(x) or fld == "loss"):
            continue
        if fld in ("step", "epoch"):
            if x != int(x) or x < 0:
                if fld == "step":
                    return None
                continue
            tot = re.match(r"^\d+/(\d+)$", v.strip())
            if tot is not None:
                out["total_steps" if fld == "step" else "total_epochs"] = float(tot[1])
        out[fld] = x
    if "step" not in out or (evidence and not _EVIDENCE & set(out)):
        return None
    return out


_FRACTION = re.compile(r"^\d+/\d+$")
# `Epoch (1/20)`, `batch [100/4495]`: a key then its counter in brackets, no colon
_KEYED_COUNTER = re.compile(r"(?<![\w/.])([A-Za-z_]\w*) ?[(\[] ?(\d+) ?/ ?(\d+) ?[)\]]")
# a bare `[2087/7312]` or `(996/1926)` (not a date `[10/17/2025`, not inside a path or a longer fraction, not
# `[2/3 12:00]`); the brackets must pair up
_BARE_COUNTER = re.compile(r"(?<![\w/])(?:\[ ?(\d+) ?/ ?(\d+) ?\]|\( ?(\d+) ?/ ?(\d+) ?\))(?!/)")
# a counter word then its whole number without a colon: `Episode 10 | Avg Reward: 8.4`, `Iter 120  loss=2.3`,
# `iteration 500, lr 0.1`, `step 40/200 - loss 0.9`; a field separator (`|`, `,`, `;`, ` - `, two spaces, the
# line's end) must follow, so a phrase (`step 2 of the setup`), a decimal (`Step 1.5`), a clock (`Iter 12:30`),
# a date or a version (`update 2024-05-01`, `step 3.1.0`) is not a counter
_SPACED_COUNTER = re.compile(r"(?<![\w/.\-])(step|iter|iters|iteration|update|episode|epoch) +(\d+)(?:/(\d+))?"
                             r"(?=\s*[|,;]|\s+-\s|\s{2,}|\s*$)|(?<=\[)(ep|episode|iter|step) (\d+)(?=\])()", re.IGNORECASE)
# (the second form: a counter word alone in brackets, `[EP 12] len=88 R=-914.4`, `[Iter 300] loss ..`; `EP` is an
# episode)
# a number written with a magnitude suffix (`Step: 425k`, `1.2M`): rounded, so never an exact counter
_ROUNDED = re.compile(r"[kKMB](?![A-Za-z])")


def inline_pairs(text: str) -> list[tuple[str, str]]:
    """The `key: number` / `key=number` pairs of a line (a `x/y` value kept whole), then the counters written
    without a colon: `Episode 10 |`, `Epoch (1/20)`, and bare `[x/y]` (key `_bracket`) with x <= y."""
    pairs = [(norm_key(m[1]), m[2] + (f"/{m[3]}" if m[3] else "")) for m in _INLINE.finditer(text)
             if not (_ROUNDED.match(text, m.end()) and norm_key(m[1]) in STEP_KEYS)]
    seen = {k for k, _ in pairs}
    for m in _SPACED_COUNTER.finditer(text):
        word, num, tot = (m[1], m[2], m[3]) if m[1] is not None else (m[4], m[5], None)
        k = "episode" if word.lower() == "ep" else norm_key(word)
        if k not in seen and (tot is None or int(num) <= int(tot)):
            pairs.append((k, num + (f"/{tot}" if tot else "")))
            seen.add(k)
    for m in _KEYED_COUNTER.finditer(text):
        k = norm_key(m[1])
        if k not in seen and int(m[2]) <= int(m[3]):
            pairs.append((k, f"{m[2]}/{m[3]}"))
            seen.add(k)
    for m in _BARE_COUNTER.finditer(text):
        a, b = (m[1], m[2]) if m[1] is not None else (m[3], m[4])
        if int(a) <= int(b) and int(b) > 1 and text[m.start() - 1:m.start()] not in ("]", ")") \
                and BRACKET_KEY not in seen:
            pairs.append((BRACKET_KEY, f"{a}/{b}"))
            seen.add(BRACKET_KEY)
    return pairs


# a loss-like metric (`loss`, `CELoss`, `avr_loss`, `ppl`, `xent`, `nll`) that is nan or inf; not a loss scale or
# a gradient norm (fp16 scalers print `loss_scale: inf` and `grad_norm (inf)` while training is fine)
_NONFINITE_LOSS = re.compile(r"(?<![\w.])([A-Za-z_]*(?:loss|ppl|perplexity|xent|nll)[A-Za-z_0-9]*)[\"']? ?(?:[:=]|is\b)? *"
                             r"\(?[-+]?(?:nan|inf(?:inity)?)\b", re.IGNORECASE)  # `loss: nan`, `Loss is Infinity`


_NONFINITE_WORD = re.compile(r"(?:nan|inf(?:inity)?)\b")  # what `_NONFINITE_LOSS` ends with, on a lower-cased line


def nonfinite_loss(text: str) -> bool:
    """Whether a progress line states a loss-like metric that is nan or inf (whatever the metric's name)."""
    if case_folds_as_lower(text):  # ignoring case is lower-casing: no `nan`/`inf`, no match (a test before the regex)
        low = text.lower()
        if "nan" not in low and "inf" not in low or not (
                "loss" in low or "ppl" in low or "perplexity" in low or "xent" in low or "nll" in low) \
                or _NONFINITE_WORD.search(low) is None:
            return False  # also a metric name the regex needs, and the word whole (`INFO` holds `inf`)
    return any("scale" not in m[1].lower() and "grad" not in m[1].lower() for m in _NONFINITE_LOSS.finditer(text))


@dataclass
class _Block:
    pairs: list[tuple[str, str]] = field(default_factory=list)
    first: LogLine | None = None
    lines: int = 0
    last_lineno: int = -1


_ERRORISH = re.compile(r"error|fail|fatal|abort|exception|killed|crash|panic|timeout|timed out|traceback",
                       re.IGNORECASE)
_KNOWN_KEYS = frozenset(STEP_KEYS) | frozenset(KEY_FIELDS)
# `Error code: 137`, `exit status: 1`, `signal: 9`: a number that reports a failure, not a metric
_STATUS_KEY = re.compile(r"(?:^|_)(?:code|status|signal|exit|errno|rc|returncode|exitcode)(?:_|$)|fail|^errors?$")


class TableReader:
    """Feed it the lines no rule matched; `accept` says whether a line belonged to a structure, `ready()`
    hands over the progress events found so far as (values, line) pairs."""

    def __init__(self) -> None:
        self._block = _Block()
        self._header: list[str] | None = None
        self._ready: list[tuple[dict[str, float], LogLine]] = []

    def ready(self) -> list[tuple[dict[str, float], LogLine]]:
        out, self._ready = self._ready, []
        return out

    def flush(self) -> None:
        """End of input: a block still open is complete."""
        b, self._block = self._block, _Block()
        if b.pairs and b.first is not None:
            values = fields_of(b.pairs)
            if values is not None:
                self._ready.append((values, b.first))

    def accept(self, ll: LogLine) -> bool:
        """Read one line no rule matched; True when it was taken as a line of progress (then it needs no
        other reading)."""
        text = ll.text
        if self._block.pairs and ll.lineno != self._block.last_lineno + 1:
            self.flush()  # another line came in between: that block is over
        took = epoch_seconds(text)
        if took is not None:
            self._ready.append(({EPOCH_SECONDS: took}, ll))
            return True
        pair = _number_pair(text)
        if pair is not None:  # `mean_td_error: -3.1e9` is a metric whatever its name says
            self._add_pair(pair[0], pair[1], ll)
            return pair[0] in _KNOWN_KEYS
        if not text.strip() or _RULER.match(text) or _ERRORISH.search(text):
            self.flush()
            return False
        cells = _cells(text)
        if cells is not None and len(cells) >= 3:
            return self._table_line(cells, ll)
        pair = _PIPE_PAIR.match(text) or _COLON_PAIR.match(text)
        if pair is not None and len(inline_pairs(text)) < 2:
            key, value = norm_key(pair[1]), (pair[2] or "").strip()
            self._add_pair(key, value, ll)
            return False
        if _LIST_ITEM.match(text) and self._block.pairs:
            self._block.last_lineno = ll.lineno
            return False
        self.flush()
        values = fields_of(inline_pairs(text), epoch_line=True)
        if values is not None:
            self._ready.append((values, ll))
            return True
        return False

    @staticmethod
    def claims(text: str) -> bool:
        """Whether this reader handles the line wherever it stands (no need to learn a rule for it): a table
        row, a `| key | value |` pair, a known `key: number` pair, a key/value line with a step."""
        if _number_pair(text) is not None or _SECTION.match(text):
            return True
        if _ERRORISH.search(text):
            return False
        if _cells(text) is not None or _PIPE_PAIR.match(text):
            return True
        return fields_of(inline_pairs(text)) is not None

    def _add_pair(self, key: str, value: str, ll: LogLine) -> None:
        b = self._block
        if b.lines >= MAX_BLOCK_LINES or (key in STEP_KEYS and any(k == key for k, _ in b.pairs)):
            self.flush()  # a repeated counter starts the next block (blocks printed without separators)
            b = self._block
        b.pairs.append((key, value))
        b.lines += 1
        b.last_lineno = ll.lineno
        if b.first is None or key in STEP_KEYS:
            b.first = ll

    def _table_line(self, cells: list[str], ll: LogLine) -> bool:
        self.flush()
        keys = [norm_key(c) for c in cells]
        if all(keys) and not any(parse_value(c) is not None for c in cells):
            # a header row: a table of steps, or another table (which ends the previous one)
            self._header = keys if any(k in STEP_KEYS for k in keys) else None
            return self._header is not None
        h = self._header
        if h is None or len(h) != len(cells):
            return False
        values = fields_of(list(zip(h, cells)))
        if values is not None:
            self._ready.append((values, ll))
        return True


def _number_pair(text: str) -> tuple[str, str] | None:
    """(key, value) of a line that is one `key: number` or `| key | number |` pair, else None."""
    pair = _PIPE_PAIR.match(text) or _COLON_PAIR.match(text)
    if pair is None or len(inline_pairs(text)) >= 2:
        return None
    key, value = norm_key(pair[1]), (pair[2] or "").strip()
    if not key or _STATUS_KEY.search(key) or parse_value(value, KEY_FIELDS.get(key)) is None:
        return None
    return key, value


def _cells(text: str) -> list[str] | None:
    """The cells of a `| a | b | c |` row (None if the line is not pipe-delimited)."""
    t = text.strip()
    if not t.startswith("|") or not t.endswith("|") or t.count("|") < 3:
        return None
    return [c.strip() for c in t[1:-1].split("|")]


# -- rate figures -----------------------------------------------------------------------------------------

_N = rf"(?<![\d.,])({_NUM})"  # not inside a number: a search stays linear on a long run of digits
_PER_STEP = r"step[ _]time|iter(?:ation)?[ _]time|batch[ _]time|time[ _]per[ _](?:step|iter(?:ation)?|batch)"
_PER_N = re.compile(rf"{_N} ?s(?:ec)? ?/ ?(\d+) ?(?:iters|iterations|steps|batches)\b")
_RATES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"{_N} ?(?:s|sec|secs) ?/ ?(?:it|iter|step|batch)\b"), "s_it"),
    (re.compile(rf"{_N} ?ms/(?:it|iter|step|batch|sample)\b"), "ms_it"),
    (re.compile(rf"{_N} ?us/(?:it|iter|step|batch|sample)\b"), "us_it"),  # Keras: `123us/sample`
    (re.compile(rf"{_N} ?(?:it|iters|steps|batches)/s(?:ec)?\b"), "it_s"),
    (re.compile(rf"\b(?:global_step/sec|steps/sec|steps_per_second)[:=] ?({_NUM})"), "it_s"),
    (re.compile(rf"(?<![\w/])ups(?: ?[:=] ?| )({_NUM})(?![\d:])"), "it_s"),  # updates per second
    # ProgressMeter: `Time  0.512 ( 0.980)`, also `Time: 0.630s (0.682s)` (the current figure, then the average)
    (re.compile(rf"(?<![\w/])Time:? +({_NUM})s? \( ?{_NUM}s?\)"), "s_it"),
    # a named time per step: `ms/batch 25.31`, `dt 512.3ms`, `step time 0.82s`, `sec_per_step=0.42`
    (re.compile(rf"(?<![\w/])ms/(?:batch|step|it|iter)(?: ?[:=] ?| +)({_NUM})"), "ms_it"),
    (re.compile(rf"(?<![\w/])(?i:dt|{_PER_STEP})(?: ?[:=] ?| )({_NUM}) ?ms\b"), "ms_it"),
    (re.compile(rf"(?<![\w/])(?i:{_PER_STEP}|s(?:ec)?_per_(?:step|iter|batch))(?: ?[:=] ?| )({_NUM})(?: ?s\b| ?sec\b)?"
                rf"(?![\d:.]| ?ms)"), "s_it"),
    (re.compile(rf"(?<![\w/])(?<!elapsed )(?<!total )(?<!epoch )(?<!eval )(?:time|iter_time|step_time|batch_time"
                rf"|time/iter|time/step)(?: \(data\))? ?[:=] ?({_NUM})(?: ?s\b)?(?![\d:])"), "s_it"),
    # `time 0.32` without a colon (not data, load, forward/backward, eval or total time)
    (re.compile(rf"(?<![\w/])(?<!data )(?<!load )(?<!forward )(?<!backward )(?<!elapsed )(?<!total )(?<!epoch )"
                rf"(?<!eval )(?<!test )(?<!val )[Tt]ime +({_NUM})(?: ?s\b)?(?![\d:./-])"), "s_it"),
]


# `elapsed: 93.2s`, ML-Agents' `Time Elapsed: 114.797 s`, `Elapsed_time: 72066.89` (a time named elapsed, unit-less)
_ELAPSED = re.compile(rf"\b(?:elapsed(?: time)?|time elapsed)(?! per)(?: ?[:=] ?| )({_NUM}) ?(?:\(s\)|s\b|secs?\b)"
                      rf"|\b(?:elapsed[ _]time|time[ _]elapsed)(?! per) ?[:=] ?({_NUM})(?![\d.:]| ?(?:ms|min|h)\b)",
                      re.IGNORECASE)


_BAR_ELAPSED = re.compile(r"^\d+/\d+ \[(?:(\d+):)?(\d+):(\d{2})<")


def elapsed_figure(text: str) -> dict[str, float]:
    """A running total of seconds a progress line states (`elapsed time = 17.61 (s)`, `elapsed: 93.2s`, a bar's
    `106/106 [00:15<`), as `elapsed_s`; not a time per iteration (`elapsed time per iteration`)."""
    bar = _BAR_ELAPSED.match(text)
    if bar is not None:
        return {"elapsed_s": int(bar[1] or 0) * 3600.0 + int(bar[2]) * 60.0 + int(bar[3])}
    m = _ELAPSED.search(text)
    if m is None:
        return {}
    try:
        v = float((m[1] or m[2]).replace(",", ""))
    except ValueError:
        return {}
    return {"elapsed_s": v} if v >= 0 else {}


EPOCH_SECONDS = "_epoch_s"
"""A value: the seconds one epoch took (`- Epoch Time: 0:04:41`, `This epoch took 2080.2 s`), the time per
increment when the epoch is the counter."""
_EPOCH_TOOK = re.compile(rf"^\s*(?:[-*] )?(?:epoch[ _]time|time[ _]per[ _]epoch|epoch[ _]duration|this epoch took)"
                         rf"(?: ?[:=] ?| )(\d+:\d{{2}}:\d{{2}}(?:\.\d+)?|{_NUM} ?(?:s|sec|secs|seconds)?)\s*$",
                         re.IGNORECASE)


# a duration in brackets or parentheses on an epoch's line: `Epoch 12/100 [133.2s] | loss ..`, `epoch 3 .. (5.2s)`
_BRACKETED_DURATION = re.compile(r"[\[(] ?(\d+(?:\.\d+)?) ?(s|secs?|seconds|min|mins|minutes) ?[\])]")


def bracketed_duration(text: str) -> float | None:
    """Seconds of the first bracketed duration in `text` (the time an epoch took, on a line whose counter is the
    epoch), else None."""
    m = _BRACKETED_DURATION.search(text)
    if m is None:
        return None
    v = float(m[1]) * (60.0 if m[2].startswith("min") else 1.0)
    return v if v > 0 else None


def epoch_seconds(text: str) -> float | None:
    """Seconds of a line that states how long an epoch took (and nothing else), else None."""
    m = _EPOCH_TOOK.match(text)
    if m is None:
        return None
    v = parse_value(re.sub(r" ?(?:seconds|secs|sec)$", "s", m[1]), "elapsed_s")
    return v if v is not None and v > 0 else None


_TIME_MINUTES = re.compile(r"\btime ?\((?:mins?|minutes)\) ?[:=] ?(\d+(?:\.\d+)?)\b", re.IGNORECASE)


def rate_figures(text: str) -> dict[str, float]:
    """The time per iteration a progress line states in its own words (`0.52 s/it`, `3.9 it/s`, `247ms/step`,
    `time: 0.52`), as `s_it` / `ms_it` / `it_s`; the first figure found."""
    low = text.lower()
    if not any(w in low for w in ("/", "time", "_per_", "dt", "ups", "cost", "sec")):
        return {}
    per_n = _PER_N.search(text)
    if per_n is not None:  # `Time 11.147s / 10iters`: seconds over a number of iterations
        try:
            secs, n = float(per_n[1].replace(",", "")), int(per_n[2])
        except ValueError:
            secs, n = 0.0, 0
        if secs > 0 and n > 0:
            return {"s_it": secs / n}
    if (mins := _TIME_MINUTES.search(text)) is not None and float(mins[1]) > 0:
        return {"s_it": float(mins[1]) * 60.0}  # `Time (mins): 35.658`: minutes (progress.py tells a running total)
    for rx, fld in _RATES:
        m = rx.search(text)
        if m is not None:
            try:
                v = float(m[1].replace(",", ""))
            except ValueError:
                continue
            if v > 0:
                return {"ms_it": v / 1000.0} if fld == "us_it" else {fld: v}
    return _keyed_rate(text)


def _keyed_rate(text: str) -> dict[str, float]:
    """A time per iteration given as a key/value pair the patterns above do not name: `batch_cost: 0.1664`,
    `avg_batch_cost: 0.25649 s`, `seconds: 2.167`, `elapsed_time_per_iteration_ms: 11.5K`."""
    for m in _KEYED_VALUE.finditer(text):
        if m[1] and m[1].lower() in _NOT_PER_STEP:
            continue  # `elapsed time = 18.0`, `data time: 0.1`: a running total or a part of the step
        fld = field_of_key(norm_key(m[2]))
        if fld in ("s_it", "ms_it"):
            v = parse_value(m[3], fld)
            if v is not None and v > 0 and math.isfinite(v):
                return {fld: v}
    return {}


_KEYED_VALUE = re.compile(rf"(?:\b([A-Za-z]+) )?(?<![\w/.])([A-Za-z_][\w/]*) ?[:=] *({_NUM}[KMG]?(?: ?(?:ms|s|sec)\b)?)"
                          rf"(?![\d:])")
_NOT_PER_STEP = frozenset({"elapsed", "total", "epoch", "data", "eval", "test", "val", "load", "forward", "backward"})
