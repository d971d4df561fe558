"""The log monitor: feed it log text (or bytes), ask it for a `LogReport` at any time.

Per line: normalise (ingest), match the family's rules (learned first, then built-in), update progress and
failure state. Lines no rule matches are counted; with an LLM assistant, the *interesting* ones (a line that
looks like metrics, or one with error words) are deferred with the lines after them, deduplicated by
template, and resolved in one batch: a known rule of another family, a past diagnosis from the failure
memory, or an LLM call; accepted answers become rules for the family, so the next occurrence (and the next
job of the family) costs nothing. Deferred lines are then processed in order, so progress and onset lines
stay exact. (The deferral and the resolution are `schedmate.logmon.resolve.Resolution`.)

The LLM never decides alone that a job is healthy: a terminal line with hard error words stays a failure
(category `other`) whatever the model says, and lines that look like instructions to a model are withheld
from it (log text is data).
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable

from schedmate.logmon.digit_blind import digit_shape
from schedmate.logmon.failures import FailureTracker, action_for, shorten
from schedmate.logmon.frames import frame_hint, resolve_cut_tracebacks
from schedmate.logmon.infra import WORKED_AROUND
from schedmate.logmon.ingest import Decoder, LineNormalizer, LogLine
from schedmate.logmon.labels import own_or_previous_label
from schedmate.logmon.matching import RuleSet
from schedmate.logmon.progress import ProgressTracker, line_values
from schedmate.logmon.records import CsvRecords, RepeatedCounter
from schedmate.logmon.repeated_shapes import ShapeReader
from schedmate.logmon.report import FailureInfo, LogReport, ProgressInfo
from schedmate.logmon.resolve import (  # Diagnosis, Proposal, looks_like_injection: re-exported
    Assistant,
    Diagnosis,
    Memory,
    Proposal,
    Resolution,
    looks_like_injection,
)
from schedmate.logmon.rules import BENIGN_RULES, builtin_rules
from schedmate.logmon.shapes import duration_line, embedded_stamp
from schedmate.logmon.store import RuleStore, family_fingerprint
from schedmate.logmon.tables import TableReader, inline_pairs, nonfinite_loss
from schedmate.logmon.throughput import batch_size_of
from schedmate.logmon.verdict import dismiss_after_finish, dismiss_survived, reached_total
from schedmate.records import DurationEstimate, FailureCategory

_FRAME = re.compile(r'^\s*File "[^"\n]*", line \d+')


def _shape_line(text: str) -> bool:
    """Whether a line counts towards the family fingerprint: not empty, not launcher/library noise (NCCL INFO,
    warnings), which comes in a different order in every run of the same script."""
    if not text.strip():
        return False
    return not any(r.regex.search(text) for r in BENIGN_RULES)


def _counter(values: dict[str, float]) -> float | None:
    return next((values[k] for k in ("step", "epoch") if k in values), None)


class Monitor(Resolution):
    """Progress, remaining time and failures from one job's log.

    `clock`: seconds (any epoch) used for hang detection while following a log without timestamps; a
    line's arrival time is taken from it. `hang_factor` x iteration time (at least `hang_min_s`, and at
    least 3x the mean gap between progress lines) without progress is a hang.
    """

    def __init__(
        self,
        *,
        source: str = "<feed>",
        assistant: Assistant | None = None,
        memory: Memory | None = None,
        store: RuleStore | None = None,
        clock: Callable[[], float] | None = None,
        hang_factor: float = 20.0,
        hang_min_s: float = 300.0,
        family_lines: int = 8,
        defer_lines: int = 20,
        batch_templates: int = 4,
        max_llm_calls: int = 12,
        learn: bool = True,
    ) -> None:
        self.source = source
        self.assistant = assistant
        self.memory = memory
        self.store = store
        self.clock = clock
        self.hang_factor = hang_factor
        self.hang_min_s = hang_min_s
        self.family_lines = family_lines
        self.defer_lines = defer_lines
        self.batch_templates = batch_templates
        self.max_llm_calls = max_llm_calls
        self.learn = learn
        self.family: str | None = None
        self.rules: RuleSet | None = None
        self.progress = ProgressTracker()
        self.failures = FailureTracker()
        self.tables = TableReader()
        self.csv = CsvRecords()
        self.counters = RepeatedCounter()
        self.shapes = ShapeReader()  # templates of repeated lines, for what no rule read (`repeated_shapes.py`)
        self._after_frame = False
        self._code_lines: set[int] = set()
        self._decoder = Decoder()
        self._norm = LineNormalizer()
        self._head: list[LogLine] = []
        self._head_shapes = 0
        self._pending: list[LogLine] = []
        self._pending_templates: dict[str, tuple[LogLine, str]] = {}
        self._seen_templates: set[str] = set()
        self._recent: deque[LogLine] = deque(maxlen=8)
        self._ignored_block = 0  # lines left of a traceback Python said it ignored (`Exception ignored in`)
        self._thread_tracebacks = 0  # tracebacks announced by `Exception in thread ...:` not seen yet
        self.lines = 0
        self.rules_matched = 0
        self.unmatched = 0
        self.rules_learned = 0
        self._proven: set[str] = set()  # learned progress rules whose counter has grown
        self._held: dict[str, list[tuple]] = {}
        self.memory_hits = 0
        self.last_ts: float | None = None
        self.last_line_clock: float | None = None
        self.finished_input = False
        self._finished_line: int | None = None  # where the counter reached its total (verdict.py)
        self.warnings: list[str] = []
        self.rule_hits: dict[str, int] = {}

    # ------------------------------------------------------------------ input
    def feed_bytes(self, data: bytes) -> None:
        self.feed(self._decoder.decode(data))

    def feed(self, text: str) -> None:
        for ll in self._norm.push(text):
            self._accept(ll)

    def flush(self) -> None:
        """Process what waits for more input (the first lines before the family is known, lines deferred for
        the LLM). Call when the source has gone quiet, e.g. a followed file that stopped growing."""
        if self.rules is None and self._head:
            self._start_family()
        self._resolve_pending()
        self._read_tables(flush=True)

    def finish(self) -> LogReport:
        """End of input: flush the partial last line and any deferred lines; the final report."""
        tail = self._decoder.decode(b"", final=True)
        for ll in self._norm.push(tail) + self._norm.flush():
            self._accept(ll)
        if self.rules is None:
            self._start_family()
        self._resolve_pending()
        self._read_tables(flush=True)
        self.finished_input = True
        return self.report()

    def _accept(self, ll: LogLine) -> None:
        self.lines = ll.lineno
        if self._after_frame:  # the source line a traceback quotes under `File "...", line N`
            if len(self._code_lines) > 4096:
                self._code_lines.clear()
            self._code_lines.add(ll.lineno)
        self._after_frame = 'File "' in ll.text and _FRAME.match(ll.text) is not None
        if self.clock is not None:
            self.last_line_clock = self.clock()
        if self.rules is None:
            self._head.append(ll)
            if _shape_line(ll.text):
                self._head_shapes += 1
            if self._head_shapes >= self.family_lines or len(self._head) >= 400:
                self._start_family()
            return
        if self._pending:
            self._pending.append(ll)
            self._maybe_defer(ll)
            if len(self._pending) >= self.defer_lines or len(self._pending_templates) >= self.batch_templates:
                self._resolve_pending()
            return
        self._process(ll)

    def _start_family(self) -> None:
        self.family = family_fingerprint([h.text for h in self._head if _shape_line(h.text)], self.family_lines)
        learned = self.store.rules_for(self.family) if self.store is not None else []
        rules = builtin_rules()
        rs = RuleSet(rules)
        for r in learned:
            rs.add(r)
        self.rules = rs
        head, self._head = self._head, []
        for ll in head:
            if self._pending:
                self._pending.append(ll)
                self._maybe_defer(ll)
            else:
                self._process(ll)

    # ------------------------------------------------------------------ per line
    def _process(self, ll: LogLine, defer: bool = True) -> None:
        text = ll.text
        if ll.ts is not None:
            self.last_ts = ll.ts if self.last_ts is None or ll.ts > self.last_ts else self.last_ts
        if not text:
            return
        assert self.rules is not None
        if self.progress.batch_size is None and "atch" in text:
            self.progress.batch_size = batch_size_of(text)
        digits = digit_shape(text)  # one digit shape per line, for the rule scan and the shapes reader
        rule, m = self.rules.match(text, digits)
        if (rule is not None and rule.kind.startswith("error:") and ll.lineno in self._code_lines
                and text[:1].isspace()):
            rule, m = None, None  # a source line a traceback quotes (`handler(signal.SIGTERM)`) is code, not an event
        is_error = rule is not None and rule.kind.startswith("error:")
        if not is_error:
            self.shapes.offer(ll.lineno, text, ll.ts, digits)
            if self.progress.step is None and nonfinite_loss(text) and self.shapes.last_is_progress():
                self.failures.on_loss(math.nan, ll.lineno, text, ll.rank)  # `Loss is Infinity` on a print no rule reads
        if self._ignored_block:
            self._ignored_block -= 1
            if rule is not None and rule.name in ("traceback", "python-exception"):
                if rule.name == "python-exception":  # the ignored traceback's last line
                    self._ignored_block = 0
                self._recent.append(ll)
                self.rules_matched += 1
                return
        if rule is None or (rule.source != "builtin" and not is_error):
            # tables and key/value prints (tables.py), read before a rule learned for one of their lines
            csv_row, rows = self.csv.accept(ll)
            taken = csv_row or self.tables.accept(ll)
            self._read_tables()
            if not taken and rule is None:
                pairs = inline_pairs(text)
                rows += self.counters.offer(pairs, ll) if pairs else []
            for values, at in rows:
                self._on_progress(values, at)
                taken = True
            if taken:
                self.rules_matched += 1
                self._recent.append(ll)
                return
        if rule is None and (span := duration_line(text)) is not None:
            self.progress.on_span(span)
            self.rules_matched += 1
            self._recent.append(ll)
            return
        if rule is None and text.startswith("Exception in thread "):
            self._thread_tracebacks += 1  # threading's report: that thread died, the main one goes on
        if rule is None:
            self.unmatched += 1
            if defer and self._wants_llm(ll):
                self._pending.append(ll)
                self._maybe_defer(ll)
            self._recent.append(ll)
            return
        self._recent.append(ll)
        self.rules_matched += 1
        if rule.source != "builtin":
            self.rule_hits[rule.name] = self.rule_hits.get(rule.name, 0) + 1
        kind = rule.kind
        if rule.name in ("python-warning", "python-exception") and nonfinite_loss(text):
            # `RuntimeWarning: epoch 1, iteration 0, loss nan`, `ValueError: loss=inf`: the run's own check says
            # the loss diverged, whatever the exception's type
            self.failures.on_error(ll.lineno, text, ll.rank, "nan", weak=False,
                                   cause="The loss diverged (NaN/inf) and the run stopped on it: {line}",
                                   rule=rule.name)
            return
        if rule.name == "traceback-frame":
            self.failures.on_frame(ll.lineno, ll.rank, frame_hint(text), text)
        if kind == "progress":
            assert m is not None
            if looks_like_injection(text):  # a line that addresses a model is data, never a progress report
                self.unmatched += 1
                return
            values, label = line_values(rule, m, text)
            if len(self._recent) >= 2:  # this line is the last one
                label = own_or_previous_label(label, self._recent[-2].text)
            if rule.source != "builtin":
                held = self._learned_progress(rule.name, (values, ll, rule.epoch_base, label))
                for args in held:
                    self._on_progress(*args)
                if not held:
                    return
            else:
                self._on_progress(values, ll, rule.epoch_base, label)
            if rule.announces_start:
                self.progress.started = True
            if rule.marks_pause:
                self.progress.on_pause(ll.lineno)
        elif kind.startswith("error:"):
            prule, pm = self.rules.match_progress(text)
            if prule is not None and pm is not None:  # a progress bar the crash message was printed onto
                pvalues, label = line_values(prule, pm, text)
                self._on_progress(pvalues, ll, prule.epoch_base, label)
            self.failures.on_error(ll.lineno, text, ll.rank, kind[6:], weak=rule.weak,
                                   cause=rule.cause or "{line}", rule=rule.name, tentative=rule.tentative,
                                   source="rule" if rule.source == "builtin" else rule.source)
            if rule.name == "traceback" and self._thread_tracebacks and self.failures.candidates:
                self._thread_tracebacks -= 1
                self.failures.candidates[-1].extra["thread"] = True
        elif kind.startswith("pause:"):
            self.progress.on_pause(ll.lineno)
        elif kind == "done":
            self.progress.done = True
        elif rule.name == "retry-succeeded":
            self.failures.on_retry_succeeded()
        elif rule.name in WORKED_AROUND:
            self.failures.on_worked_around(ll.lineno, ll.rank, "oom")
        elif rule.name == "exception-ignored":
            self._ignored_block = 24

    def _learned_progress(self, name: str, args: tuple) -> list[tuple]:
        """A learned progress rule's readings, once it has shown a counter that grows: a model may take a
        settings line (`save_steps=500`, `Learning rate for epoch 3`) for a progress report, and such a line
        is printed once or repeats one value; a real progress line repeats with its step or epoch rising.
        Until then its counter and time readings are held back (and dropped if it never proves itself); a
        reading of the loss alone passes, it moves no counter."""
        values = args[0]
        if name in self._proven or not set(values) - {"loss"}:
            return [args]
        held = self._held.setdefault(name, [])
        held.append(args)
        counted = [(i, c) for i, a in enumerate(held) if (c := _counter(a[0])) is not None]
        if len(counted) >= 2 and counted[-1][1] > counted[-2][1]:
            self._proven.add(name)
            del self._held[name]
            return held[counted[-2][0]:]
        if len(held) > 8:
            del held[:-1]
        return []

    def _on_progress(self, values: dict[str, float], ll: LogLine, epoch_base: int = 0,
                     label: str | None = None) -> None:
        if not math.isnan(values.get("loss", 0.0)) and nonfinite_loss(ll.text):
            values = {**values, "loss": math.nan}  # `ppl: nan`, `avr_loss=nan`: a loss-like metric diverged
        ts = ll.ts if ll.ts is not None or "step" not in values and "epoch" not in values else embedded_stamp(ll.text)
        is_step = self.progress.on_values(values, ll.rank, ts, ll.lineno, self.last_line_clock, epoch_base, label)
        if is_step:
            p = self.progress
            self.failures.on_step(ll.lineno, p.step)
            if self._finished_line is None and not p.outer.open \
                    and reached_total(p.step, p.total_steps, p.per_epoch, p.epoch, p.total_epochs, p.epoch_base):
                self._finished_line = ll.lineno
        if "loss" in values and (is_step or ("step" not in values and
                                             (ll.rank is None or ll.rank == self.progress.leader))):
            self.failures.on_loss(values["loss"], ll.lineno, ll.text, ll.rank)

    def _read_tables(self, flush: bool = False) -> None:
        if flush:
            self.tables.flush()
        for values, at in self.tables.ready():
            self._on_progress(values, at)

    # ------------------------------------------------------------------ report
    def _hang(self, now: float | None) -> tuple[int, str] | None:
        p = self.progress
        if p.step_events < 2 or p.done:
            return None
        it = p.iteration_time()
        if it is None:
            return None
        threshold = max(self.hang_factor * it, self.hang_min_s, 3.0 * (p.line_gap() or 0.0))
        if p.in_pause:
            threshold += max(3 * max(p.pauses, default=0.0), 1800.0)
        idle: float | None = None
        if p.last_step_ts is not None and self.last_ts is not None:
            idle = self.last_ts - p.last_step_ts
        if now is not None and p.last_step_clock is not None:
            idle = max(idle or 0.0, now - p.last_step_clock)
        if idle is None or idle <= threshold:
            return None
        onset = (p.last_step_line or 0) + 1
        return onset, (f"No training progress for {idle:.0f} s after step {p.step} "
                       f"(about {idle / it:.0f}x the {it:.3g} s iteration time)")

    def report(self, now: float | None = None) -> LogReport:
        """The current estimate. `now`: the supplied clock's time, for hang detection while following."""
        if now is None and self.clock is not None and not self.finished_input:
            now = self.clock()
        p = self.progress
        if self.finished_input:  # the end of the log: what came after each error line (verdict.py)
            resolve_cut_tracebacks(self.failures.candidates)
            dismiss_survived(self.failures)
            p.done = dismiss_after_finish(self.failures, self._finished_line) or p.done
        if p.done:  # a thread's traceback after (or around) the end of training did not stop it
            for c in self.failures.candidates:
                c.dismissed = c.dismissed or bool(c.extra.get("thread"))
        cand = self.failures.verdict()
        failure = FailureInfo()
        if cand is not None:
            action, recoverable = action_for(cand.category)
            rank = f" (rank {cand.rank})" if cand.rank is not None else ""
            cause = cand.cause.replace("{line}", shorten(cand.text)) + rank
            failure = FailureInfo(category=FailureCategory(cand.category), failed=True, onset_line=cand.onset_line,
                                  root_cause=cause, recoverable=recoverable, action=action,
                                  confidence=cand.confidence if not cand.weak else 0.5, source=cand.source)
        else:
            hang = self._hang(now)
            if hang is not None:
                action, recoverable = action_for("hang")
                failure = FailureInfo(category=FailureCategory.hang, failed=True, onset_line=hang[0],
                                      root_cause=hang[1], recoverable=recoverable, action=action, confidence=0.7,
                                      source="hang")
        rem = p.remaining()
        it = p.iteration_time()
        step, total = (p.step if p.step is not None or not p.started else 0), p.reported_total()
        if it is None or step is None:  # what the rules left empty, from the shapes of repeated lines
            shaped = self.shapes.fallback(p.step)
            if shaped is not None and step is None:
                step, total = shaped.step, shaped.total
            it = it if it is not None or shaped is None else shaped.iteration_time_s
        progress = ProgressInfo(
            current_step=step, total_steps=total,
            epoch=p.epoch, total_epochs=p.total_epochs,
            iteration_time_s=round(it, 6) if it is not None else None,
            samples_per_s=p.samples_s, tokens_per_s=p.tokens_s,
            last_loss=p.loss if p.loss is None or math.isfinite(p.loss) else None,
            steps_done=p.global_step(), steps_left=p.remaining_steps(),
        )
        remaining = None
        if rem is not None and not failure.failed:
            remaining = DurationEstimate(p10=round(rem.p10, 3), p50=round(rem.p50, 3), p90=round(rem.p90, 3))
        calls = self.assistant.calls if self.assistant is not None else self._calls_when_dropped()
        return LogReport(
            source=self.source, family=self.family, lines=self.lines, failure=failure, progress=progress,
            remaining_time_s=remaining.p50 if remaining else None, remaining=remaining,
            finished=p.done and not failure.failed, llm_calls=calls, memory_hits=self.memory_hits,
            rules_matched=self.rules_matched, unmatched_lines=self.unmatched, rules_learned=self.rules_learned,
            bad_bytes=self._decoder.bad_bytes, warnings=list(self.warnings),
        )

    def _calls_when_dropped(self) -> int:
        return self._dropped_calls


def analyze_text(text: str, **kw: object) -> LogReport:
    m = Monitor(**kw)  # type: ignore[arg-type]
    m.feed(text)
    return m.finish()


def analyze_file(path: str, chunk_size: int = 1 << 20, **kw: object) -> LogReport:
    m = Monitor(source=str(path), **kw)  # type: ignore[arg-type]
    with open(path, "rb") as fh:
        while True:
            data = fh.read(chunk_size)
            if not data:
                break
            m.feed_bytes(data)
    return m.finish()


def now_clock() -> float:
    return time.time()


__all__ = ["Assistant", "Diagnosis", "Memory", "Monitor", "Proposal", "analyze_file", "analyze_text",
           "looks_like_injection", "now_clock"]
