"""What the log monitor reports, and how a report becomes scheduler-facing `Annotation` fields."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from schedmate.records import (
    Annotation,
    DurationEstimate,
    FailureAction,
    FailureCategory,
    FailureSignal,
    Provenance,
)


class ProgressInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    current_step: int | None = None
    total_steps: int | None = None
    epoch: float | None = None
    total_epochs: int | None = None
    iteration_time_s: float | None = None
    samples_per_s: float | None = None
    tokens_per_s: float | None = None
    last_loss: float | None = None
    steps_done: int | None = None
    """Steps run so far over the whole run (epochs folded in when the counter restarts every epoch)."""
    steps_left: int | None = None
    """Steps still to run over the whole run; None when the log does not say how many there are."""


class FailureInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    category: FailureCategory = FailureCategory.none
    failed: bool = False
    onset_line: int | None = None
    """1-based line number (by newline in the source) of the first line of the failure."""
    root_cause: str | None = None
    recoverable: bool = False
    action: FailureAction = FailureAction.nothing
    confidence: float = Field(default=1.0, ge=0, le=1)
    source: str = "rule"
    """rule | loss | hang | llm | memory: what decided the verdict."""


class LogReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str = "<feed>"
    family: str | None = None
    lines: int = 0
    failure: FailureInfo = FailureInfo()
    progress: ProgressInfo = ProgressInfo()
    remaining_time_s: float | None = None
    """Median estimate of the time to the end of training; None when the total or the rate is unknown."""
    remaining: DurationEstimate | None = None
    finished: bool = False
    llm_calls: int = 0
    memory_hits: int = 0
    rules_matched: int = 0
    """Lines a rule matched (built-in or learned)."""
    unmatched_lines: int = 0
    rules_learned: int = 0
    bad_bytes: int = 0
    """Undecodable bytes replaced while decoding."""
    warnings: list[str] = []

    def contract_json(self) -> dict[str, Any]:
        """The stable JSON object printed by `schedmate analyze log` (extra keys may be added, never removed)."""
        f = self.failure
        return {
            "failure": {
                "category": f.category.value,
                "failed": f.failed,
                "onset_line": f.onset_line,
                "root_cause": f.root_cause,
                "recoverable": f.recoverable,
                "action": f.action.value,
            },
            "progress": self.progress.model_dump(),
            "remaining_time_s": self.remaining_time_s,
            "llm_calls": self.llm_calls,
            "rules_matched": self.rules_matched,
            "remaining": self.remaining.model_dump() if self.remaining else None,
            "finished": self.finished,
            "lines": self.lines,
            "unmatched_lines": self.unmatched_lines,
            "memory_hits": self.memory_hits,
            "rules_learned": self.rules_learned,
            "bad_bytes": self.bad_bytes,
            "failure_source": f.source,
            "warnings": self.warnings,
        }


def annotation_fields(report: LogReport) -> dict[str, Any]:
    """`Annotation` keyword arguments derived from a log report (predicted_remaining_s, failure)."""
    f = report.failure
    signal = FailureSignal(
        category=f.category,
        failed=f.failed,
        confidence=f.confidence,
        action=f.action,
        recoverable=f.recoverable,
        onset_line=f.onset_line,
        root_cause=f.root_cause,
    )
    remaining = report.remaining_time_s
    if f.failed:
        remaining = None  # a failed job has no meaningful time to completion
    return {"predicted_remaining_s": remaining, "failure": signal}


def to_annotation(report: LogReport, job_id: str, made_at: float = 0.0, model: str | None = None) -> Annotation:
    prov = Provenance(component="logs", prompt_id="log_rules" if report.llm_calls else None, model=model,
                      llm_calls=report.llm_calls)
    return Annotation(job_id=job_id, made_at=made_at, provenance=(prov,), **annotation_fields(report))
