"""Line shapes the rule list does not cover on its own, kept here to keep `rules.py` small.

- counters with no keyword or with punctuation around them (`EXTRA_PROGRESS_RULES`, matched after the generic
  progress rules of `rules.py`, so a rule there always wins);
- a line that is only a duration (`0:04:19.419558`): the time the iterations since the previous such line took
  (`duration_line`);
- how long an epoch took, named beside the epoch's counter (`Epoch 07 loss 2.72 | train 3.1s`; `epoch_duration`);
- a date and time inside a progress line rather than at its start (`[epoch:3/1200] ... [Time:[2022-08-28
  00:16:24]]`), the line's own time stamp when it has no leading one (`embedded_stamp`).
"""

from __future__ import annotations

import calendar
import re

from schedmate.logmon.custom_counters import CUSTOM_PROGRESS_RULES
from schedmate.logmon.research_prints import EARLY_RESEARCH_RULES, EXTRA_RESEARCH_RULES
from schedmate.logmon.rules import F, Rule
from schedmate.logmon.tables import bracketed_duration


def _p(name: str, pattern: str, needles: tuple[str, ...], **kw: object) -> Rule:
    return Rule(name=name, pattern=pattern, kind="progress", needles=needles, **kw)  # type: ignore[arg-type]


EARLY_PROGRESS_RULES: list[Rule] = [
    # a counter whose key names its total, before the generic `Epoch n` readers of `rules.py` take the epoch for the
    # counter: `Epoch 4, step/total_step: 30/120 25.00% Loss:1.2`, `iter/max_iter = 300/9000`
    _p("named-total-fraction", r"\b(?:epoch\W{1,3}(?P<epoch>\d+)\W{1,4})?(?:step|iter|iteration|batch)(?:e?s)? ?/ ?"
       r"(?:total|max|num|n)_?(?:step|iter|iteration|batch)(?:e?s)? ?[:=] ?(?P<step>\d+) ?/ ?(?P<total_steps>\d+)\b",
       ("total", "max", "num", "/n"), ignore_case=True),
    *EARLY_RESEARCH_RULES,  # a loop's number before the fraction inside it (`research_prints.py`)
]

EXTRA_PROGRESS_RULES: list[Rule] = [
    # a phase, its epoch and how far into it, all in one bracket (the counter restarts every epoch):
    # `[train: 12, 450 / 2000] FPS: 31.0 (30.2)  ,  Loss/total: 0.81`
    _p("phase-epoch-fraction-bracket", r"^\[(?:train|training) ?: ?(?P<epoch>\d+) ?, ?(?P<step>\d+) ?/ ?(?P<total_steps>\d+) ?\]",
       ("train",), ignore_case=True),
    # a bare bracketed counter opening the line, then a loss: `[1200/200000] Train loss: 0.31, Valid loss: 0.33`
    _p("bare-bracket-loss", rf"^\[ *(?P<step>\d+) ?/ ?(?P<total_steps>\d+) *\][^\n]*?\b(?:train_)?loss\b[ :=]+(?P<loss>{F})",
       ("loss",), ignore_case=True),
    # an epoch fraction, then a step fraction, whatever punctuation wraps the numbers: `epoch: {3/300}, step: {1/2}`,
    # `(epoch 3/300) (iter 20/500)`
    _p("epoch-step-fractions", r"\bepoch\W{1,4}(?P<epoch>\d+) ?/ ?(?P<total_epochs>\d+)\W{1,6}(?:step|iter|iteration|batch)"
       r"\W{1,4}(?P<step>\d+) ?/ ?(?P<total_steps>\d+)\b", ("epoch",), ignore_case=True),
    # a counter opening the line, then named numbers: `iter 4100:, hard_loss_metric=0.53, lr=0.0001`
    _p("counter-metrics", r"^(?:iter|iteration|step|batch) ?#?(?P<step>\d+) ?[:,]+ ?[A-Za-z_]\w* ?[:=] ?[-+]?\.?\d",
       ("iter", "step", "batch"), ignore_case=True),
    # the average a logger states when an epoch's loop ends (not an evaluation loop's): `Epoch: [3] Total time: 0:20:04
    # (0.4700 s / it)`
    _p("loop-total-rate", rf"^(?!\W*(?:test|val|valid|eval)\b)[^\n]*?\bTotal time: [\d:.]+ \((?P<s_it>{F}) ?s ?/ ?it\)",
       ("total time",), ignore_case=True),
    # MXNet's Speedometer: `Epoch[2] Batch [700-720]<TAB>Speed: 6.27 samples/sec<TAB>Loss=8.63`
    _p("batch-range", r"\bEpoch\[(?P<epoch>\d+)\] Batch \[\d+-(?P<step>\d+)\]", ("batch [",)),
    # an epoch and how far into it, nothing else (VITS-family trainers): `Train Epoch: 1516 [5%]`; the epoch is
    # the counter while no step counter shows
    _p("epoch-percent", r"\bepoch:? (?P<epoch>\d+) \[\d{1,3}(?:\.\d+)?%\]$", ("epoch",), ignore_case=True,
       epoch_counter=True),
    # Keras with `verbose=2`, one line per epoch and no bar: `19/19 - 12s - loss: 0.27 - accuracy: 0.96` (the
    # seconds are the epoch's), newer Keras adds `- 358ms/epoch - 3ms/step` at the end
    _p("keras-epoch-line", rf"^ *(?P<step>\d+)/(?P<total_steps>\d+) - (?P<elapsed_s>\d+)s - (?:loss: (?P<loss>{F}))?"
       rf"(?:[^\n]*? - (?:(?P<ms_it>{F})ms|(?P<s_it>{F})s)/step$)?", ("s - ",)),
    # an epoch and a batch in brackets, the batch restarting every epoch, no total: `[Epoch 3][Batch 50], Speed: ..`
    # (GluonCV-style scripts), `Epoch[9] Batch [620]<TAB>Speed: 142.3 samples/sec` (MXNet's Speedometer)
    _p("epoch-batch-brackets", rf"\bEpoch ?[\[ ](?P<epoch>\d+)\] ?\[?Batch ?[\[ ] ?(?P<step>\d+) ?\](?!/)"
       rf"(?:[^\n]*?\bSpeed: (?P<samples_s>{F}) samples/s)?", ("batch",), ignore_case=True),
    # a step in brackets, then a training loss: `Step [1200]  train Loss : 0.41, training accuracy : 0.9`
    _p("bracket-step-loss", rf"^(?:step|iter|iteration) ?\[ ?(?P<step>\d+) ?\] +(?:train(?:ing)? +)?loss ?[:=] ?(?P<loss>{F})",
       ("step", "iter"), ignore_case=True),
    # the evaluation printed between them: `Step [1200]  val Loss : 0.52, val accuracy : 0.88` (a pause)
    Rule(name="bracket-step-eval", pattern=r"^(?:step|iter|iteration) ?\[ ?\d+ ?\] +(?:val|valid|validation|eval|test)\b",
         kind="pause:eval", needles=("step", "iter"), ignore_case=True),
    # a save that names the step it was made at: `Saving model and optimizer state at iteration 6000 to out.pt`
    _p("saved-at-step", r"\b(?:saving|saved)\b[^\n]{0,60}?\bat (?:iteration|iter|step|global step) (?P<step>\d+)\b",
       ("saving", "saved"), ignore_case=True, marks_pause=True),
    *CUSTOM_PROGRESS_RULES,  # research code's own prints (`custom_counters.py`)
    *EXTRA_RESEARCH_RULES,  # more of them, as issue threads quote them (`research_prints.py`)
]


_DURATION = re.compile(r"^(?:(\d+) days?, )?(\d{1,3}):(\d\d):(\d\d(?:\.\d+)?)$")


def duration_line(text: str) -> float | None:
    """Seconds of a line that is a duration and nothing else (`0:04:19.419558`, `1 day, 2:03:04`), else None."""
    m = _DURATION.match(text.strip())
    if m is None or int(m[3]) >= 60 or float(m[4]) >= 61:
        return None
    secs = int(m[1] or 0) * 86400 + int(m[2]) * 3600 + int(m[3]) * 60 + float(m[4])
    return secs if secs > 0 else None


_STAMP = re.compile(r"(?<![\d.:/-])(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?(?![\d:])")


def embedded_stamp(text: str) -> float | None:
    """Epoch seconds of the one date and time a line holds away from its start (naive, taken as UTC); None when
    it holds none or several (a line that names two moments is no clock reading)."""
    if "-" not in text:  # no date
        return None
    found = _STAMP.findall(text)
    if len(found) != 1:
        return None
    y, mo, d, h, mi, s, f = found[0]
    if not (1 <= int(mo) <= 12 and 1 <= int(d) <= 31 and int(h) < 24 and int(mi) < 60 and int(s) < 61):
        return None
    ts = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s), 0, 0, 0))
    return ts + (int(f) / 10 ** len(f) if f else 0.0)


# a duration named as the training time (not inference or data time) on an epoch's line: `| train 3.1s`,
# `train_time: 61.3 s`, `took 95s`, `time 0:01:05`
_LABELLED_DURATION = re.compile(r"\b(?:train(?:ing)?(?:[ _]time)?|took|time|duration)\b ?[:=]? ?(?:(\d+(?:\.\d+)?) ?"
                                r"(s|sec|secs|seconds|min|mins|minutes)\b|(\d+):(\d\d):(\d\d(?:\.\d+)?)\b)", re.IGNORECASE)

# a key that names the epoch as what the number measures, with no unit (seconds, as loggers print them):
# `time per epoch:  2.46`, `epoch_time=31.7`; a unit after the number is read by `_LABELLED_DURATION` or refused
_PER_EPOCH_TIME = re.compile(r"\b(?:time[ _]per[ _]epoch|epoch[ _]time)\b\s*[:=]?\s*(\d+(?:\.\d+)?)(?![\d.]| ?(?:m|h|min|ms)\b)",
                             re.IGNORECASE)

# a qualifier just before the word: a running total, a forecast or another phase's time, not the epoch's
_NOT_EPOCH_TIME = re.compile(r"(?:elapsed|total|remaining|eta|left|infer\w*|eval\w*|val\w*|test\w*|data|load\w*)\W*$",
                             re.IGNORECASE)


def epoch_duration(text: str) -> float | None:
    """Seconds an epoch took, stated on its line after the counter: in brackets (`Epoch 12/100 [133.2s]`), or
    named as the training time with a unit (`Epoch 07 loss 2.72 | train 3.1s | infer 5.5s`); else None."""
    took = bracketed_duration(text)
    if took is not None:
        return took
    m = next((m for m in _LABELLED_DURATION.finditer(text) if not _NOT_EPOCH_TIME.search(text[max(0, m.start() - 12):m.start()])),
             None)
    if m is None:
        per = _PER_EPOCH_TIME.search(text)
        return float(per[1]) if per is not None and float(per[1]) > 0 else None
    if m[1] is not None:
        v = float(m[1]) * (60.0 if m[2].lower().startswith("min") else 1.0)
    else:
        v = int(m[3]) * 3600.0 + int(m[4]) * 60.0 + float(m[5])
    return v if v > 0 else None
