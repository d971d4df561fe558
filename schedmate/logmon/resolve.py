"""What the monitor does with lines no rule matches, when an LLM assistant is there: pick the interesting ones
(metric-looking or with error words, never one addressed to a model), defer them with the lines after them,
deduplicated by template, and resolve them in one batch: a known rule of another family, a past diagnosis from
the failure memory, or an LLM call. Accepted answers become rules for the family.

`Resolution` is the part of `Monitor` that does this (a mixin over the monitor's state: `rules`, `store`,
`assistant`, `memory`, `failures`, the pending window); `Proposal`, `Diagnosis`, `Assistant` and `Memory`
are what it asks of an LLM assistant and a failure memory (`schedmate.logmon.assist` implements both).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from schedmate.logmon.failures import FailureTracker, shorten
from schedmate.logmon.ingest import LogLine, case_folds_as_lower
from schedmate.logmon.learn import build_rule, validate_rule
from schedmate.logmon.matching import RuleSet
from schedmate.logmon.rules import Rule
from schedmate.logmon.store import RuleStore, template_of
from schedmate.logmon.tables import TableReader

_SUSPICIOUS = re.compile(
    r"error|fail|fatal|abort|exception|killed|crash|panic|timeout|timed out|lost|unreachable|corrupt|denied"
    r"|refused|segv|signal|nan\b|diverg|unrecoverable|cannot|unable", re.IGNORECASE)
_HARD = re.compile(r"error|fail|fatal|abort|exception|killed|crash|panic|segv|unrecoverable", re.IGNORECASE)
_METRIC = re.compile(r"\d")
_METRIC_WORD = re.compile(r"loss|step|iter|epoch|acc|lr\b|it/s|s/it|tok|sample|ppl|throughput|/s\b",
                          re.IGNORECASE)
_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above)|disregard|you are (?:an?|the) |instruction|system prompt"
    r"|assistant|report (?:this|the) job|mark (?:this|the) job|as (?:healthy|finished|succeeded)|respond with"
    r"|answer with|\bllm\b|language model|prompt", re.IGNORECASE)


_INJECTION_WORDS = ("ignore", "disregard", "you are", "instruction", "prompt", "assistant", "report", "mark", "healthy",
                    "finished", "succeeded", "respond", "answer", "llm", "language")
"""A literal of each branch of `_INJECTION`: an ASCII line (where ignoring case is lower-casing) without any of them
cannot match (so also a line whose other characters fold to no ASCII letter), and most lines have none (a cheap
test before the regex)."""


def looks_like_injection(text: str) -> bool:
    """A log line addressed to a model (withheld from the LLM; it stays in the log as data)."""
    if case_folds_as_lower(text):
        low = text.lower()
        for w in _INJECTION_WORDS:  # a loop, not `any(...)`: no generator per line
            if w in low:
                break
        else:
            return False
    return _INJECTION.search(text) is not None


@dataclass
class Proposal:
    line: str
    kind: str
    meanings: dict[str, str] = field(default_factory=dict)


@dataclass
class Diagnosis:
    category: str
    root_cause: str
    source: str = "llm"


class Assistant(Protocol):
    """What the monitor needs from an LLM (see `schedmate.logmon.assist.LLMAssistant`)."""

    calls: int

    def propose(self, lines: list[str]) -> list[Proposal]: ...

    def diagnose(self, window: list[str], onset: int) -> Diagnosis | None: ...


class Memory(Protocol):
    def lookup(self, window_text: str) -> Diagnosis | None: ...

    def remember(self, window_text: str, diagnosis: Diagnosis) -> None: ...


class Resolution:
    """Deferral and LLM resolution of unmatched lines; mixed into `Monitor`, whose state it uses."""

    assistant: Assistant | None
    memory: Memory | None
    store: RuleStore | None
    family: str | None
    rules: RuleSet | None
    failures: FailureTracker
    learn: bool
    max_llm_calls: int
    memory_hits: int
    rules_learned: int
    warnings: list[str]
    _pending: list[LogLine]
    _pending_templates: dict[str, tuple[LogLine, str]]
    _seen_templates: set[str]
    _code_lines: set[int]
    tables: TableReader
    _recent: deque[LogLine]
    _dropped_calls = 0

    def _process(self, ll: LogLine, defer: bool = True) -> None:
        raise NotImplementedError  # Monitor's

    def _wants_llm(self, ll: LogLine) -> bool:
        if self.assistant is None or self.assistant.calls >= self.max_llm_calls:
            return False
        text = ll.text
        if len(text) < 4 or looks_like_injection(text):
            return False
        tpl = template_of(text)
        if tpl in self._seen_templates or ll.lineno in self._code_lines or self.tables.claims(text):
            return False  # a traceback's source line is code, not a message; tables.py reads structured prints
        return bool(_SUSPICIOUS.search(text) or (_METRIC.search(text) and _METRIC_WORD.search(text)))

    def _maybe_defer(self, ll: LogLine) -> None:
        """Register an unmatched interesting line of the pending window as a template to resolve."""
        if not ll.text or self.rules is None:
            return
        tpl = template_of(ll.text)
        if tpl in self._seen_templates or tpl in self._pending_templates:
            return
        if self._pending and self._pending[0] is not ll:
            # a line that arrived during deferral: only interesting if no rule matches it
            rule, _ = self.rules.match(ll.text)
            if rule is not None or not self._wants_llm(ll):
                return
        self._pending_templates[tpl] = (ll, "suspicious" if _SUSPICIOUS.search(ll.text) else "metric")

    # ------------------------------------------------------------------ LLM resolution
    def _resolve_pending(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        templates, self._pending_templates = self._pending_templates, {}
        self._seen_templates.update(templates)
        before = list(self._recent)
        metric = [ll for ll, what in templates.values() if what == "metric"]
        suspicious = [ll for ll, what in templates.values() if what == "suspicious"]
        diagnosed: dict[int, Diagnosis] = {}
        try:
            if metric:
                self._learn_metric_lines(metric)
            for ll in suspicious:
                d = self._diagnose(ll, before, pending)
                if d is not None:
                    diagnosed[ll.lineno] = d
        except Exception as e:  # the LLM layer failing must never stop monitoring
            from schedmate.llm import LLMError

            if not isinstance(e, LLMError):
                raise
            self._llm_down(e)
        for ll in pending:
            self._process(ll, defer=False)
            d = diagnosed.get(ll.lineno)
            if d is not None and d.category not in ("none",) and self.rules is not None and \
                    self.rules.match(ll.text)[0] is None:
                # not turned into a rule (validation failed): still a candidate from the diagnosis
                self.failures.on_error(ll.lineno, ll.text, ll.rank, d.category, weak=False,
                                       cause=d.root_cause + " ({line})", rule=None, source=d.source,
                                       confidence=0.6)

    def _llm_down(self, e: Exception) -> None:
        msg = f"LLM unavailable ({type(e).__name__}: {shorten(str(e), 120)}); continuing with rules alone"
        if msg not in self.warnings:
            self.warnings.append(msg)
        if self.assistant is not None:
            self._dropped_calls = self.assistant.calls
        self.assistant = None

    def _memory_down(self, e: Exception) -> None:
        self.warnings.append(f"failure memory unavailable ({type(e).__name__}: {shorten(str(e), 120)}); "
                             "diagnoses are not reused")
        self.memory = None

    def _adopt(self, rule: Rule, persist: bool = True) -> None:
        assert self.rules is not None
        self.rules.add(rule)
        self.rules_learned += 1
        if persist and self.store is not None and self.family is not None and self.learn:
            self.store.add_rule(self.family, rule)

    def _known_rule_for(self, text: str) -> Rule | None:
        """A rule learned for another family that matches this line."""
        if self.store is None:
            return None
        for _fam, r in self.store.all_rules(exclude_family=self.family):
            if r.regex.search(text):
                return r
        return None

    def _learn_metric_lines(self, lines: list[LogLine]) -> None:
        todo = []
        for ll in lines:
            r = self._known_rule_for(ll.text)
            if r is not None:
                self._adopt(r)
            else:
                todo.append(ll)
        if not todo or self.assistant is None:
            return
        known_errors = self.store.error_lines() if self.store is not None else []
        for p in self.assistant.propose([ll.text for ll in todo]):
            if p.kind.startswith("error:"):
                continue  # error lines go through diagnosis, never through a metric proposal
            kind = p.kind
            if kind == "progress" and not {"step", "loss", "epoch"} & set(p.meanings.values()):
                kind = "benign"  # nothing to track: keep it out of the LLM's way as noise
            try:
                rule = build_rule(p.line, kind, p.meanings)
            except (ValueError, re.error) as e:
                self.warnings.append(f"could not build a rule for {shorten(p.line, 60)!r}: {e}")
                continue
            v = validate_rule(rule.pattern, rule.kind, [p.line], known_error_lines=known_errors)
            if v.ok:
                self._adopt(rule)
            else:
                self.warnings.append(f"rejected a proposed rule for {shorten(p.line, 60)!r}: {'; '.join(v.reasons)}")

    def _diagnose(self, ll: LogLine, before: list[LogLine], pending: list[LogLine]) -> Diagnosis | None:
        r = self._known_rule_for(ll.text)
        if r is not None:
            self._adopt(r)
            return None
        idx = next((i for i, p in enumerate(pending) if p is ll), 0)
        window_lines = [b for b in before if b.lineno < ll.lineno][-2:] + pending[idx: idx + 3]
        window_lines = [w for w in window_lines if w.text and not looks_like_injection(w.text)]
        window = [w.text[:300] for w in window_lines]
        onset = next((i for i, w in enumerate(window_lines) if w is ll), 0)
        window_text = "\n".join(template_of(t) for t in window)
        d: Diagnosis | None = None
        if self.memory is not None:
            try:
                d = self.memory.lookup(window_text)
            except Exception as e:  # noqa: BLE001 - a broken memory store must not stop monitoring
                self._memory_down(e)
            if d is not None:
                self.memory_hits += 1
                d = Diagnosis(d.category, d.root_cause, source="memory")
        if d is None and self.assistant is not None:
            d = self.assistant.diagnose(window, onset)
            if d is not None and self.memory is not None and d.category != "none":
                try:
                    self.memory.remember(window_text, d)
                except Exception as e:  # noqa: BLE001
                    self._memory_down(e)
        if d is None:
            return None
        if d.category == "none" and _HARD.search(ll.text):
            # the model may not clear a hard error line; it stays a (weak) failure candidate
            d = Diagnosis("other", "Unclassified error line (the model saw no failure in it)", d.source)
        kind = "benign" if d.category == "none" else f"error:{d.category}"
        try:
            rule = build_rule(ll.text, kind, {}, cause=d.root_cause + " ({line})", source=d.source)
        except (ValueError, re.error):
            return d
        v = validate_rule(rule.pattern, rule.kind, [ll.text])
        if v.ok:
            # A "no failure" verdict of the model silences the line for this job only: a small model's
            # negative is never made permanent for the family.
            self._adopt(rule, persist=d.category != "none")
            if self.store is not None and d.category != "none":
                self.store.add_error_line(ll.text, d.category)
        return d
