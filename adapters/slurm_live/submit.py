"""What `job_submit.lua` sends at submission and the Slurm settings it is told to apply, decided here.

The Lua shim collects a job's fields into a `SubmitRequest` (JSON; every byte outside printable ASCII
travels as a `\\u00XX` escape, so any script survives the trip and is decoded back to UTF-8 here), the
service annotates the job, and `settings_for()` turns the annotation into `SlurmSettings` with the same
`decide()` that `schedmate adapt slurm` uses for a pending job. `answer_text()` renders them as the few
`key=value` lines the shim parses; it checks every number against its own bounds again.

Time limits (`SubmitPolicy.time_policy`):

| policy | TimeLimit | TimeMin | what can end a healthy job early |
|---|---|---|---|
| `time-min` (default) | the user's | p90 x margin | the prediction, only when the backfill scheduler started the job early with it (Slurm 22.05 then runs it under its TimeMin), and `schedmate watch slurm` extends that (never beyond the user's request) while the job progresses; jobs the main scheduler starts keep the user's limit |
| `limit` | p90 x margin | the user's | the prediction, unless the watcher extends it while the job progresses |
| `none` | the user's | the user's | nothing |

Neither value is ever above what the user asked for (or, without `--time`, what the partition would give).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from adapters.base import AdapterConfig, JobPhase, JobView, decide
from schedmate.records import Annotation

NO_VAL = 0xFFFFFFFE
INFINITE = 0xFFFFFFFF
"""Slurm's 32-bit 'unset' and 'unlimited' (slurm.h); the shim sends raw numbers and they are read here."""
MAX_MINUTES = 10 * 365 * 1440
KEY = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
SERVICE_ID = re.compile(r"slurm-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ADMIN_COMMENT_PREFIX = "schedmate:id="
_GPU = re.compile(r"(?:^|,)gres[:/]gpu(?::[^:,]+)?:(\d+)(?=,|$)")


def _latin1_to_utf8(v: object) -> object:
    """Undo the shim's byte-per-code-point transport; text that did not come that way is kept as it is."""
    if not isinstance(v, str):
        return v
    try:
        return v.encode("latin-1").decode("utf-8", errors="replace")
    except UnicodeEncodeError:
        return v


class SubmitPolicy(BaseModel):
    """Site settings: every line of `schedmate_submit.conf` the shim does not use itself. Unknown keys are an
    error (HTTP 422 naming the key, and the job goes on unchanged), so a typo never passes in silence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    time_policy: Literal["time-min", "limit", "none"] = "time-min"
    margin: float = Field(default=1.25, ge=1.0, le=10.0)
    """Predicted limit = p90 x this."""
    max_nice: int = Field(default=1000, ge=0, le=10_000)
    """Nice of jobs predicted to run long_s or more (0 for short_s or less); never set when the user gave one."""
    short_s: float = Field(default=600.0, gt=0)
    long_s: float = Field(default=86400.0, gt=0)
    sensitivity: float = Field(default=0.5, ge=0, le=1)
    """Multi-node jobs at or above this network sensitivity wait for one switch."""
    max_switch_wait_s: float = Field(default=300.0, ge=0, le=86400)
    overwrite_comment: bool = False
    """Replace a Comment the user gave (default: keep it, the summary is then only in the service)."""


class SubmitRequest(BaseModel):
    """`POST /v1/slurm/submit`: a job as `job_submit.lua` sees it. Numbers are Slurm's raw values
    (NO_VAL when unset); times are minutes, wait4switch seconds."""

    model_config = ConfigDict(extra="ignore")

    key: str = Field(pattern=KEY)
    """A fresh UUID from the shim: the job id does not exist yet at submission."""
    user: str | None = Field(default=None, max_length=128)
    uid: int | None = None
    name: str | None = Field(default=None, max_length=1024)
    partition: str | None = Field(default=None, max_length=1024)
    work_dir: str | None = Field(default=None, max_length=4096)
    script: str | None = Field(default=None, max_length=1 << 20)
    argv: list[str] = Field(default=[], max_length=512)
    """The batch script's path as given to sbatch, then its arguments."""
    comment: str | None = Field(default=None, max_length=4096)
    time_limit: int | None = None
    time_min: int | None = None
    part_default_time: int | None = None
    part_max_time: int | None = None
    nice: int | None = None
    nice_offset: int = 0x80000000
    min_nodes: int | None = None
    num_tasks: int | None = None
    tres_per_node: str | None = Field(default=None, max_length=1024)
    tres_per_job: str | None = Field(default=None, max_length=1024)
    tres_per_task: str | None = Field(default=None, max_length=1024)
    req_switch: int | None = None
    wait4switch: int | None = None
    options: dict[str, str] = {}

    _text = field_validator("user", "name", "partition", "work_dir", "script", "comment", "tres_per_node",
                            "tres_per_job", "tres_per_task", mode="before")(_latin1_to_utf8)

    @field_validator("argv", mode="before")
    @classmethod
    def _argv(cls, v: object) -> object:
        return [_latin1_to_utf8(x) for x in v] if isinstance(v, list) else v

    @staticmethod
    def _set(v: int | None) -> int | None:
        """A raw Slurm number, or None when unset or unlimited."""
        return None if v is None or v >= NO_VAL or v < 0 else v

    def user_time_limit(self) -> int | None:
        """Minutes the user asked for with --time; None when unset or UNLIMITED."""
        v = self._set(self.time_limit)
        return v if v else None

    def requested_minutes(self) -> int | None:
        """The limit the job would run under without us: the user's --time, else the partition's default,
        else its maximum; never above the partition's maximum. None = unlimited."""
        limit = self.user_time_limit()
        if limit is None and self.time_limit != INFINITE:
            limit = self._set(self.part_default_time) or None
        cap = self._set(self.part_max_time) or None
        if limit is None:
            return cap
        return min(limit, cap) if cap else limit

    def user_nice(self) -> int | None:
        return None if self.nice is None or self.nice >= NO_VAL else self.nice - self.nice_offset

    def nodes(self) -> int:
        return max(1, self._set(self.min_nodes) or 1)

    def num_gpus(self) -> int:
        """GPUs from --gpus (per job), --gpus-per-node x nodes or --gpus-per-task x tasks; 0 when none."""
        per_job = _gpus(self.tres_per_job)
        if per_job:
            return per_job
        per_node = _gpus(self.tres_per_node)
        if per_node:
            return per_node * self.nodes()
        return _gpus(self.tres_per_task) * max(1, self._set(self.num_tasks) or 1)

    def wrapped_command(self) -> str | None:
        """The command of an `sbatch --wrap=...` job (sbatch writes it into a generated script)."""
        marker = "# This script was created by sbatch --wrap.\n\n"
        s = self.script or ""
        if marker not in s:
            return None
        return s.split(marker, 1)[1].strip() or None


def _gpus(tres: str | None) -> int:
    return sum(int(n) for n in _GPU.findall(tres or ""))


class SlurmSettings(BaseModel):
    """What the shim may set; None = leave the job's own value."""

    id: str
    comment: str | None = None
    time_limit: int | None = Field(default=None, ge=1)
    time_min: int | None = Field(default=None, ge=1)
    nice: int | None = Field(default=None, ge=0)
    req_switch: int | None = Field(default=None, ge=1)
    wait4switch: int | None = Field(default=None, ge=0)
    notes: list[str] = []


def adapter_config(policy: SubmitPolicy) -> AdapterConfig:
    return AdapterConfig(time_limit_margin=policy.margin, short_s=policy.short_s, long_s=policy.long_s,
                         sensitivity_threshold=policy.sensitivity, max_topology_wait_s=policy.max_switch_wait_s,
                         allow_extend=False, overwrite_comment=policy.overwrite_comment)


def settings_for(a: Annotation, sub: SubmitRequest, policy: SubmitPolicy, service_id: str) -> SlurmSettings:
    """The pending-job decision of `adapters.base.decide`, mapped onto job_submit fields. Pure."""
    requested = sub.requested_minutes()
    view = JobView(id=service_id, phase=JobPhase.pending, raw_state="PENDING",
                   time_limit_s=None if requested is None else requested * 60.0, nodes=sub.nodes(),
                   nice=sub.user_nice() or 0, comment=sub.comment or "")
    d = decide(a, view, adapter_config(policy))
    s = SlurmSettings(id=service_id, notes=[n.replace(" (use --allow-extend)", "") for n in d.notes])

    if not sub.comment or (policy.overwrite_comment and d.summary):
        s.comment = d.summary or None
    else:
        s.notes.append("the job has its own Comment: summary not written")

    predicted = d.time_limit_s // 60 if d.time_limit_s else None
    user_min = sub._set(sub.time_min) or None
    if predicted is None or policy.time_policy == "none":
        pass
    elif policy.time_policy == "time-min":
        if user_min is not None:
            s.notes.append(f"the user set TimeMin={user_min}: kept")
        else:
            s.time_min = predicted
    else:  # limit: Slurm rejects TimeMin above TimeLimit, so the user's TimeMin is a floor
        s.time_limit = max(predicted, user_min or 0)
    if requested is not None:  # belt and braces: decide() never goes above the request
        s.time_limit = min(s.time_limit, requested) if s.time_limit else None
        s.time_min = min(s.time_min, requested) if s.time_min else None

    if d.priority_score is not None:
        if sub.user_nice() is None:
            s.nice = round(d.priority_score * policy.max_nice)
        else:
            s.notes.append(f"the user set Nice={sub.user_nice()}: kept")
    if d.topology_wait_s:
        if sub._set(sub.req_switch) is None:
            s.req_switch, s.wait4switch = 1, d.topology_wait_s
        else:
            s.notes.append("the user set --switches: kept")
    return s


def _line_safe(text: str, limit: int) -> str:
    return "".join(c if " " <= c <= "~" else "_" for c in text)[:limit]


def answer_text(s: SlurmSettings) -> str:
    """`key=value` lines, one per setting (absent = leave alone), then `note=` lines; printable ASCII only."""
    lines = [f"id={s.id}"]
    if s.comment is not None:
        lines.append(f"comment={_line_safe(s.comment, 250)}")
    for key in ("time_limit", "time_min", "nice", "req_switch", "wait4switch"):
        value = getattr(s, key)
        if value is not None:
            lines.append(f"{key}={int(value)}")
    lines += [f"note={_line_safe(n, 300)}" for n in s.notes]
    return "\n".join(lines) + "\n"
