"""Slurm adapter: annotations become `scontrol update`, `scontrol requeue` and `scancel` commands.

| decision | command | notes |
|---|---|---|
| summary | `scontrol update JobId=N Comment=...` | a user's own comment is kept unless overwrite_comment |
| time limit | `scontrol update JobId=N TimeLimit=<minutes>` | only root/SlurmUser may raise one |
| priority | `scontrol update JobId=N Nice=<0..max_nice>` | positive nice only: any user may lower their own priority |
| topology | `scontrol update JobId=N Switches=1@HH:MM:SS` | Slurm's delay knob: wait up to that long for one leaf switch (needs topology/tree; capped by max_switch_wait) |
| failure | `scancel N` / `scontrol requeue N` | requeue only for jobs with Requeue=1 |

Each `key=value` is one argv element, so a value cannot start a second key (checked live: a Comment of
`x TimeLimit=1` leaves the limit alone).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from adapters.base import (
    ADAPTERS,
    SUMMARY_PREFIX,
    Action,
    ActionKind,
    AdapterConfig,
    AdapterError,
    ClusterAdapter,
    Decision,
    JobPhase,
    JobView,
    Skip,
    Verdict,
    read_command,
)

# Plain job ids and job-array tasks (1234, 1234_7); heterogeneous components and ranges are not annotated.
JOB_ID = re.compile(r"[0-9]{1,12}(_[0-9]{1,9})?")

_PHASES = {
    "PENDING": JobPhase.pending,
    "RUNNING": JobPhase.running,
    **{s: JobPhase.finished for s in ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                                      "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED")},
}

# The fallback format: comment last, since it is the only free text and may hold the separator.
SQUEUE_FORMAT = "%i|%T|%M|%l|%D|%y|%k"


class SlurmConfig(AdapterConfig):
    max_nice: int = 1000
    """Nice given to jobs predicted to run long_s or more (0 for short_s or less); Slurm's --nice default is 100."""
    squeue: str = "squeue"
    scontrol: str = "scontrol"
    scancel: str = "scancel"


@ADAPTERS.register("slurm")
class SlurmAdapter(ClusterAdapter):
    name = "slurm"
    config: SlurmConfig

    def __init__(self, config: SlurmConfig | None = None) -> None:
        super().__init__(config or SlurmConfig())

    def valid_id(self, job_id: str) -> bool:
        return JOB_ID.fullmatch(job_id) is not None

    def read_state(self) -> dict[str, JobView]:
        """`squeue --json` (Slurm >= 21.08 with the openapi plugins), else a pipe-separated format."""
        try:
            return parse_squeue_json(read_command([self.config.squeue, "--json"]))
        except AdapterError as json_error:
            try:
                text = read_command([self.config.squeue, "--noheader", "--states=all", "-o", SQUEUE_FORMAT])
            except AdapterError as e:
                raise AdapterError(f"{e}; and with --json: {json_error}") from None
            return parse_squeue_format(text)

    def parse_state(self, text: str, now: float | None = None) -> dict[str, JobView]:
        return parse_squeue_json(text, now) if text.lstrip().startswith("{") else parse_squeue_format(text)

    def render(self, d: Decision, job: JobView) -> tuple[list[Action], list[Skip]]:
        cfg, jid = self.config, d.job_id
        acts: list[Action] = []
        skips: list[Skip] = []

        def update(kind: ActionKind, field: str, reason: str) -> None:
            acts.append(Action(job_id=jid, kind=kind, argv=(cfg.scontrol, "update", f"JobId={jid}", field),
                               reason=reason))

        if job.phase in (JobPhase.pending, JobPhase.running):
            comment = job.comment or ""
            if comment == d.summary:
                pass
            elif comment and not comment.startswith(SUMMARY_PREFIX) and not cfg.overwrite_comment:
                skips.append(Skip(job_id=jid, reason="job has its own Comment: summary not written"))
            else:
                update(ActionKind.annotate, f"Comment={_comment_safe(d.summary)}", "annotation summary")

        if d.failure is Verdict.terminate:
            acts.append(Action(job_id=jid, kind=ActionKind.terminate, argv=(cfg.scancel, jid),
                               reason="confident failure signal, not recoverable"))
        elif d.failure is Verdict.requeue:
            if job.requeueable is False:
                skips.append(Skip(job_id=jid, reason="recoverable failure but the job is not requeueable "
                                                     "(Requeue=0): left for its owner"))
            else:
                acts.append(Action(job_id=jid, kind=ActionKind.requeue, argv=(cfg.scontrol, "requeue", jid),
                                   reason="confident recoverable failure: restart from checkpoint"))
        if d.time_limit_s:
            update(ActionKind.time_limit, f"TimeLimit={d.time_limit_s // 60}",
                   f"{d.time_limit_basis}; was {_minutes(job.time_limit_s)}")
        if d.priority_score is not None:
            nice = round(d.priority_score * cfg.max_nice)
            if job.nice != nice:
                update(ActionKind.priority, f"Nice={nice}", f"shortest-predicted-first (score {d.priority_score})")
        if d.topology_wait_s:
            update(ActionKind.topology, f"Switches=1@{_hms(d.topology_wait_s)}",
                   f"network-sensitive {job.nodes}-node job: wait for one switch")
        return acts, skips


def _comment_safe(text: str) -> str:
    # The summary is built from numbers and enums already; this keeps even a future field printable.
    return "".join(c if c.isprintable() and c not in "\"'\\" else "_" for c in text)


def _hms(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _minutes(seconds: float | None) -> str:
    return "unlimited" if seconds is None else f"{seconds / 60:.0f} min"


# --------------------------------------------------------------------------- reading squeue


def _number(v: Any) -> float | None:
    """squeue --json numbers: plain (openapi v0.0.38, Slurm 22.05) or {set, infinite, number} (23.02+)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        if v.get("infinite") or v.get("set") is False:
            return None
        return _number(v.get("number"))
    return None


def _state(v: Any) -> str:
    if isinstance(v, list):  # 23.02+: ["RUNNING"] or ["PENDING", "REQUEUED"]
        return str(v[0]) if v else "UNKNOWN"
    return str(v or "UNKNOWN")


def parse_squeue_json(text: str, now: float | None = None) -> dict[str, JobView]:
    try:
        doc = json.loads(text)
        jobs = doc["jobs"]
        if not isinstance(jobs, list):
            raise TypeError("jobs is not a list")
    except (ValueError, KeyError, TypeError) as e:
        raise AdapterError(f"squeue --json: unexpected output ({e})") from None
    now = time.time() if now is None else now
    out: dict[str, JobView] = {}
    for j in jobs:
        if not isinstance(j, dict) or _number(j.get("job_id")) is None:
            continue
        jid = str(int(_number(j["job_id"]) or 0))
        state = _state(j.get("job_state"))
        phase = _PHASES.get(state, JobPhase.other)
        start = _number(j.get("start_time"))
        elapsed = max(0.0, now - start) if phase is JobPhase.running and start else 0.0
        limit = _number(j.get("time_limit"))
        nice = _number(j.get("nice"))
        requeue = j.get("requeue")
        view = JobView(
            id=jid, phase=phase, raw_state=state, elapsed_s=elapsed,
            time_limit_s=None if limit is None else limit * 60.0,  # minutes in squeue --json
            nodes=max(1, int(_number(j.get("node_count")) or 1)),
            nice=0 if nice is None else int(nice),  # 22.05 reports an unset nice as null
            comment=str(j.get("comment") or ""),
            requeueable=requeue if isinstance(requeue, bool) else None,
        )
        out[jid] = view
        task = _number(j.get("array_task_id"))
        array_id = _number(j.get("array_job_id"))
        if task is not None and array_id:  # also reachable as 1234_7
            out.setdefault(f"{int(array_id)}_{int(task)}", view.model_copy(update={"id": f"{int(array_id)}_{int(task)}"}))
    return out


_DURATION = re.compile(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)")


def parse_slurm_duration(text: str) -> float | None:
    """`[days-][hours:]minutes:seconds` as squeue prints %M and %l; None for UNLIMITED / NOT_SET."""
    m = _DURATION.fullmatch(text.strip())
    if not m:
        return None
    d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    return float(((d * 24 + h) * 60 + mi) * 60 + s)


def parse_squeue_format(text: str) -> dict[str, JobView]:
    """Lines of SQUEUE_FORMAT; malformed lines are an error, not a silent gap in the state."""
    out: dict[str, JobView] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("|", 6)
        if len(parts) != 7:
            raise AdapterError(f"squeue line {n}: expected 7 |-separated fields, got {line[:80]!r}")
        jid, state, used, limit, nodes, nice, comment = parts
        jid, state = jid.strip(), state.strip()
        phase = _PHASES.get(state, JobPhase.other)
        try:
            view = JobView(id=jid, phase=phase, raw_state=state, elapsed_s=parse_slurm_duration(used) or 0.0,
                           time_limit_s=parse_slurm_duration(limit), nodes=max(1, int(nodes)),
                           nice=int(nice), comment="" if comment == "(null)" else comment)
        except ValueError as e:
            raise AdapterError(f"squeue line {n}: {e}") from None
        out[jid] = view
    return out
