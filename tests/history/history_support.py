"""Builders for the history tests (records on literal values)."""

from __future__ import annotations

from schedmate.history.records import HistoryRecord


def rec(job_id: str, dur: float, end: float, name: str = "train-bert", user: str | None = "alice",
        gpus: int = 1, outcome: str = "completed", submit: float | None = None, **kw) -> HistoryRecord:
    return HistoryRecord(job_id=job_id, user=user, num_gpus=gpus, duration_s=dur, outcome=outcome,
                         submit_time=max(0.0, end - dur) if submit is None else submit, end_time=end, name=name, **kw)
