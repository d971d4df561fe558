"""What the history store keeps about one finished job, and the text it is embedded by.

A `HistoryRecord` is built from a `Job` *after* it finished (`from_job(job, end_time, runtime_s)`), so
its duration is the observed run time. The embedded text holds only what is known at submission
(command, name, job type, code-profile summary) with digit runs masked, so that `bert-000123` and
`bert-000456` read the same and a query at submission uses exactly the same text builder
(`query_text(job)`). `workload` is kept as metadata only: on a `Job` it is simulator ground truth
(see `schedmate.records`), so it never enters a query.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from schedmate.records import Job, Outcome

_DIGITS = re.compile(r"\d+")
_WS = re.compile(r"\s+")

# Code-profile fields worth putting in the text (what the job *is*); the rest goes to metadata only.
PROFILE_TEXT_FIELDS = ("framework", "model_family", "model_name", "params", "precision", "train_steps",
                       "epochs", "global_batch_size", "seq_len")

ProfileValue = str | int | float | bool


def mask_digits(text: str) -> str:
    """Digit runs -> `0`, whitespace collapsed: `bert-000123` -> `bert-0`."""
    return _WS.sub(" ", _DIGITS.sub("0", text)).strip()


def profile_summary(profile: dict[str, Any] | None) -> dict[str, ProfileValue]:
    """Flat scalar fields of a code profile: a `CodeProfile` (its contract), its contract dict, or a flat dict."""
    if profile is None:
        return {}
    if hasattr(profile, "to_contract"):
        profile = profile.to_contract()  # type: ignore[union-attr]
    out: dict[str, ProfileValue] = {}
    for k, v in profile.items():
        if k in ("evidence", "derived", "warnings", "llm_calls"):
            continue
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if isinstance(v2, (str, int, float, bool)):
                    out[f"{k}.{k2}"] = v2
        elif isinstance(v, (str, int, float, bool)):
            out[k] = v
    return out


def job_text(name: str | None, job_type: str | None, command: str | None,
             profile: dict[str, ProfileValue] | None = None) -> str:
    """The text a job is embedded by; the same function serves records and queries."""
    parts: list[str] = []
    if name:
        parts.append(f"name: {mask_digits(name)}")
    if job_type:
        parts.append(f"type: {job_type}")
    if command:
        parts.append(f"command: {mask_digits(command)[:400]}")
    if profile:
        prof = ", ".join(f"{k}={profile[k]}" for k in PROFILE_TEXT_FIELDS if k in profile)
        if prof:
            parts.append(f"profile: {prof}")
    return " | ".join(parts) if parts else "unnamed job"


def query_text(job: Job, profile: dict[str, Any] | None = None) -> str:
    """Text of a job at submission: never reads duration, outcome or workload."""
    command = job.semantic.command if job.semantic is not None else None
    return job_text(job.name, job.job_type, command, profile_summary(profile))


class HistoryRecord(BaseModel):
    """One finished job. Validation rejects records that would poison predictions."""

    model_config = ConfigDict(frozen=True)

    job_id: str = Field(min_length=1)
    user: str | None = None
    num_gpus: int = Field(ge=0)
    duration_s: float = Field(ge=0)
    """Observed run time (what the job actually ran until its outcome)."""
    outcome: Outcome = Outcome.completed
    submit_time: float = Field(ge=0)
    end_time: float = Field(ge=0)
    name: str | None = None
    job_type: str | None = None
    vc: str | None = None
    command: str | None = None
    workload: str | None = None
    profile: dict[str, ProfileValue] = Field(default_factory=dict)

    @field_validator("duration_s", "submit_time", "end_time")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    @model_validator(mode="after")
    def _times(self) -> HistoryRecord:
        if self.end_time < self.submit_time:
            raise ValueError(f"end_time {self.end_time} is before submit_time {self.submit_time}")
        return self

    @property
    def text(self) -> str:
        return job_text(self.name, self.job_type, self.command, self.profile)

    def metadata(self) -> dict[str, ProfileValue]:
        """Flat metadata for a vector store (no None values: chromadb refuses them)."""
        meta: dict[str, Any] = {
            "job_id": self.job_id, "user": self.user, "num_gpus": self.num_gpus, "duration_s": self.duration_s,
            "outcome": self.outcome.value, "submit_time": self.submit_time, "end_time": self.end_time,
            "name": self.name, "job_type": self.job_type, "vc": self.vc, "command": self.command,
            "workload": self.workload,
        }
        meta.update({f"profile.{k}": v for k, v in self.profile.items()})
        return {k: v for k, v in meta.items() if v is not None}

    @classmethod
    def from_metadata(cls, meta: dict[str, Any]) -> HistoryRecord:
        fields = {k: v for k, v in meta.items() if not k.startswith("profile.")}
        fields["profile"] = {k[len("profile."):]: v for k, v in meta.items() if k.startswith("profile.")}
        return cls.model_validate(fields)

    @classmethod
    def from_job(cls, job: Job, end_time: float, runtime_s: float,
                 profile: dict[str, Any] | None = None) -> HistoryRecord:
        """Record of a job that finished at `end_time` after running `runtime_s` (call only after the finish)."""
        return cls(
            job_id=job.id, user=job.user, num_gpus=job.num_gpus, duration_s=runtime_s, outcome=job.outcome,
            submit_time=job.submit_time, end_time=end_time, name=job.name, job_type=job.job_type, vc=job.vc,
            command=job.semantic.command if job.semantic is not None else None, workload=job.workload,
            profile=profile_summary(profile),
        )
