"""Failure candidates from error lines and loss values, and the verdict.

Model: an error line opens a *candidate* at its line (or joins the open failure block of the same rank:
consecutive error lines within `block_lines` belong to one failure, and a specific line sets the category
of a block that a weak marker such as `Traceback` opened, keeping the marker's line as the onset).
A candidate is dismissed when training goes on after it (`dismiss_after` step events of the leading rank):
a caught traceback, a retried connection, a warning. NaN/inf losses and loss spikes are candidates that
stay until a finite, normal loss is seen again. The verdict is the earliest candidate still standing:
later error lines are usually consequences (ranks torn down by the launcher, NCCL aborts after an OOM).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import deque
from dataclasses import dataclass, field

from schedmate.logmon.root_cause import attribute_root_cause
from schedmate.records import FailureAction

ACTIONS: dict[str, tuple[FailureAction, bool]] = {
    "oom": (FailureAction.reduce_memory, True),
    "nccl": (FailureAction.restart_from_checkpoint, True),
    "nan": (FailureAction.restart_from_checkpoint, True),
    "dataloader": (FailureAction.reduce_memory, True),
    "segfault": (FailureAction.fix_code, False),
    "node": (FailureAction.cordon_node, True),
    "preempted": (FailureAction.restart_from_checkpoint, True),
    "user_code": (FailureAction.fix_code, False),
    "hang": (FailureAction.restart_from_checkpoint, True),
    "other": (FailureAction.nothing, False),
    "none": (FailureAction.nothing, False),
}
"""Category -> (what a scheduler should do, whether a restart can succeed without a code change)."""


RULE_SOURCES = ("rule", "loss")
"""Candidates found by a built-in rule or the loss values; the others come from the model (a diagnosis, a
rule learned from one, the failure memory)."""


def action_for(category: str) -> tuple[FailureAction, bool]:
    return ACTIONS.get(category, ACTIONS["other"])


def shorten(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


@dataclass
class Candidate:
    category: str
    onset_line: int
    last_line: int
    text: str
    rank: int | None
    weak: bool
    cause: str
    source: str = "rule"
    rule: str | None = None
    tentative: bool = False
    sticky: bool = False
    """Not dismissed by progress (NaN loss keeps the job useless even if steps go on)."""
    progress_after: int = 0
    step_at_onset: float | None = None
    """The main counter when the candidate opened (see `verdict.dismiss_survived`)."""
    dismissed: bool = False
    confidence: float = 0.9
    extra: dict[str, object] = field(default_factory=dict)


_STDLIB_FRAME = re.compile(r'File "[^"\n]*[\\/]lib[\\/]python\d+(?:\.\d+)?[\\/](?!(?:site|dist)-packages[\\/])[^"\n]*"')
"""A frame of Python's own library (`.../lib/python3.6/multiprocessing/context.py`), not of an installed package."""

RECONVERGE_FACTOR = 4.0
"""A loss spike is a new curve, not a divergence, once the loss falls this many times below the spike's peak."""


class FailureTracker:
    def __init__(self, dismiss_after: int = 3, block_lines: int = 40, spike_factor: float = 10.0) -> None:
        self.dismiss_after = dismiss_after
        self.block_lines = block_lines
        self.spike_factor = spike_factor
        self.candidates: list[Candidate] = []
        self._finite: deque[float] = deque(maxlen=50)
        self._loss_cand: Candidate | None = None
        self._spike_peak = 0.0  # the highest loss of the standing spike (0 when none stands)
        self._all_settled = True  # no candidate waiting to be dismissed by progress
        self.last_step_line: int | None = None
        self.last_step: float | None = None

    def _open_block(self, lineno: int, rank: int | None) -> Candidate | None:
        for c in reversed(self.candidates):
            if c.dismissed or c.source == "loss":
                continue
            if lineno - c.last_line <= self.block_lines and (c.rank is None or rank is None or c.rank == rank):
                return c
            break
        return None

    def on_error(self, lineno: int, text: str, rank: int | None, category: str, *, weak: bool, cause: str,
                 rule: str | None, tentative: bool = False, source: str = "rule", confidence: float = 0.9) -> None:
        c = self._open_block(lineno, rank)
        if c is not None and source in RULE_SOURCES and c.source not in RULE_SOURCES and not weak:
            c = None  # a failure a rule knows opens its own candidate, apart from what the model said before it
        if c is not None:
            c.last_line = lineno
            if c.weak and not weak:
                c.category, c.weak, c.cause, c.rule, c.text = category, False, cause, rule, text
                c.tentative, c.source, c.confidence = tentative, source, confidence
                if c.rank is None:
                    c.rank = rank
            elif c.weak and weak and c.category == "other" and category != "other":
                # a weak marker that says more (a wrapper naming where the exception came from) than the
                # `Traceback` line that opened the block; a specific line after it still sets the category
                c.category, c.cause, c.rule, c.text = category, cause, rule, text
            elif c.tentative and not tentative and not weak:
                c.tentative = False
            return
        self.candidates.append(Candidate(category=category, onset_line=lineno, last_line=lineno, text=text,
                                         rank=rank, weak=weak, cause=cause, source=source, rule=rule,
                                         tentative=tentative, confidence=confidence, step_at_onset=self.last_step))
        self._all_settled = False

    def on_frame(self, lineno: int, rank: int | None, hint: str | None = None, text: str = "") -> None:
        """A traceback frame: the traceback a weak marker opened goes on, however deep the stack, so the
        exception line that ends it (which names the category) still joins it. `hint`: the category this frame
        points at if it stays the innermost one (see `frames`)."""
        c = self._open_block(lineno, rank)
        if c is not None and c.weak:
            c.last_line = lineno
            if hint is None and c.extra.get("frame_hint") and _STDLIB_FRAME.search(text):
                return  # the standard library the hinted machinery called (a DataLoader starting its workers)
            c.extra["frame_hint"], c.extra["frame_text"] = hint, text

    def on_retry_succeeded(self) -> None:
        for c in self.candidates:
            if c.tentative and not c.dismissed:
                c.dismissed = True

    def on_worked_around(self, lineno: int, rank: int | None, category: str, window: int = 10) -> None:
        """A line saying the program handled the failure just before it (`skipping batch` after an OOM): the
        candidates of that category, and the tracebacks no line has named yet, ending within `window` lines
        of it on its rank, are dismissed (a worked-around event, not the end of the job)."""
        for c in self.candidates:
            if not c.dismissed and c.source in RULE_SOURCES and (c.category == category or c.weak) \
                    and 0 <= lineno - c.last_line <= window and (c.rank is None or rank is None or c.rank == rank):
                c.dismissed = True

    def on_step(self, lineno: int | None = None, step: float | None = None) -> None:
        if lineno is not None and step is not None:
            self.last_step_line, self.last_step = lineno, step
        if self._all_settled:
            return
        busy = False
        for c in self.candidates:
            if not c.dismissed and not c.sticky:
                c.progress_after += 1
                if c.progress_after >= self.dismiss_after:
                    c.dismissed = True
                else:
                    busy = True
        self._all_settled = not busy

    def on_loss(self, loss: float, lineno: int, text: str, rank: int | None) -> None:
        if not math.isfinite(loss):
            if self._loss_cand is None:
                self._loss_cand = Candidate(
                    category="nan", onset_line=lineno, last_line=lineno, text=text, rank=rank, weak=False,
                    cause=f"The training loss became {loss}: {{line}}", source="loss", sticky=True,
                    confidence=0.95)
                self.candidates.append(self._loss_cand)
            return
        base = statistics.median(self._finite) if len(self._finite) >= 20 else None
        if self._loss_cand is not None and loss * RECONVERGE_FACTOR <= self._spike_peak:
            # the loss jumped and is coming down again (a new training stage, a re-initialised head): the jump
            # is the start of a new curve, not a divergence; the baseline starts over from here
            self._loss_cand.dismissed = True
            self._loss_cand = None
            self._spike_peak = 0.0
            self._finite.clear()
            self._finite.append(loss)
            return
        if base is not None and base > 0 and loss > self.spike_factor * base:
            self._spike_peak = max(self._spike_peak, loss)
            if self._loss_cand is None:
                self._loss_cand = Candidate(
                    category="nan", onset_line=lineno, last_line=lineno, text=text, rank=rank, weak=False,
                    cause=f"The loss spiked to {loss:.4g} ({loss / base:.0f}x its recent median) and stayed there: "
                          "{line}", source="loss", sticky=True, confidence=0.7)
                self.candidates.append(self._loss_cand)
            return
        if self._loss_cand is not None:
            self._loss_cand.dismissed = True
            self._loss_cand = None
        self._spike_peak = 0.0
        self._finite.append(loss)

    def verdict(self) -> Candidate | None:
        """The earliest standing candidate, specific ones first, and of those the ones a built-in rule or the
        loss found before the ones the model diagnosed or learned: the model adds failures rules cannot
        classify, it never displaces one they found."""
        attribute_root_cause(self.candidates)
        standing = [c for c in self.candidates if not c.dismissed]
        if not standing:
            return None
        strong = [c for c in standing if not c.weak]
        by_rules = [c for c in strong if c.source in RULE_SOURCES]
        return min(by_rules or strong or standing, key=lambda c: c.onset_line)
