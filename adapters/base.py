"""One interface for acting on annotations in a real cluster, and the decisions every cluster shares.

An adapter does three things, kept apart so each can be tested alone:

1. `read_state()` asks the cluster what its jobs look like now (`squeue --json`, `kubectl get jobs -o json`)
   and returns `JobView`s;
2. `plan(annotations, state)` is pure: `decide()` turns each annotation into a platform-neutral
   `Decision` (time limit, priority score, topology wait, failure verdict, summary), and the adapter
   renders that into `Action`s, each one argv list; what it will not do becomes a `Skip` with a reason;
3. `apply(plan, dry_run)` prints the commands (dry run, the default) or runs them, one argv list per
   `subprocess.run`, never through a shell.

Untrusted text (job names, an LLM's root cause) never reaches a command line: job ids are validated
against the platform's grammar, and the summary written back is built from typed numbers and enums only.
"""

from __future__ import annotations

import math
import shlex
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from enum import Enum
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schedmate.records import Annotation, FailureAction, sensitivity_from_slowdown, slowdown_from_sensitivity
from schedmate.registry import Registry


class AdapterError(RuntimeError):
    """Bad input or an unreadable cluster state: the whole run stops with this message."""


class JobPhase(str, Enum):
    pending = "pending"
    running = "running"
    finished = "finished"
    other = "other"
    """Suspended, completing, requeue-held...: states no decision is made for."""


class JobView(BaseModel):
    """What an adapter knows about one job in the cluster right now."""

    model_config = ConfigDict(frozen=True)

    id: str
    phase: JobPhase
    raw_state: str
    elapsed_s: float = Field(default=0.0, ge=0)
    time_limit_s: float | None = Field(default=None, ge=0)
    """The limit the job runs under now; None = unlimited."""
    nodes: int = Field(default=1, ge=1)
    """Nodes (Slurm) or pods in parallel (Kubernetes)."""
    nice: int | None = None
    comment: str | None = None
    requeueable: bool | None = None
    # Kubernetes only
    namespace: str | None = None
    name: str | None = None
    queue: str | None = None
    """Kueue queue-name label: the job's priority and topology can only be changed through Kueue."""
    priority_class: str | None = None
    never_started: bool = False


class AdapterConfig(BaseModel):
    """Knobs shared by every adapter; each field's docstring is its CLI help."""

    model_config = ConfigDict(frozen=True)

    min_confidence: float = Field(default=0.8, ge=0, le=1)
    """Failure signals below this confidence are reported, never acted on."""
    requeue_recoverable: bool = True
    """Requeue recoverable failures whose action is restart_from_checkpoint (else they are ended too)."""
    time_limit_margin: float = Field(default=1.25, ge=1.0)
    """New time limit = predicted p90 x this margin."""
    min_headroom_s: float = Field(default=600.0, ge=0)
    """A running job keeps at least this much time beyond what it has already used."""
    allow_extend: bool = False
    """Allow raising a time limit above what the user asked for (Slurm: admin only)."""
    short_s: float = Field(default=600.0, gt=0)
    """Predicted runtimes at or below this get the best priority."""
    long_s: float = Field(default=86400.0, gt=0)
    """Predicted runtimes at or above this get the worst priority."""
    sensitivity_threshold: float = Field(default=0.5, ge=0, le=1)
    """Multi-node pending jobs at or above this network sensitivity wait for a compact placement."""
    max_topology_wait_s: float = Field(default=300.0, ge=0)
    """Upper bound on that wait (Slurm's own cap, SchedulerParameters=max_switch_wait, is 300 s by default)."""
    summary_max_len: int = Field(default=200, ge=40, le=1000)
    overwrite_comment: bool = False
    """Replace a job comment that schedmate did not write."""


class Verdict(str, Enum):
    terminate = "terminate"
    requeue = "requeue"


SUMMARY_PREFIX = "schedmate:"


class Decision(BaseModel):
    """What should happen to one job, before any platform syntax."""

    job_id: str
    failure: Verdict | None = None
    time_limit_s: int | None = None
    time_limit_basis: str = ""
    priority_score: float | None = Field(default=None, ge=0, le=1)
    """0 = shortest predicted (best priority) .. 1 = longest."""
    topology_wait_s: int | None = None
    summary: str = ""
    facts: dict[str, str] = {}
    """The annotation as short key -> value strings (for Kubernetes annotations), typed fields only."""
    notes: list[str] = []
    """Why something was not decided; shown as skips."""


class ActionKind(str, Enum):
    annotate = "annotate"
    time_limit = "time_limit"
    priority = "priority"
    topology = "topology"
    terminate = "terminate"
    requeue = "requeue"


class Action(BaseModel):
    model_config = ConfigDict(frozen=True)

    job_id: str
    kind: ActionKind
    argv: tuple[str, ...]
    reason: str

    def command(self) -> str:
        """The argv as one line a POSIX shell would split back into the same argv."""
        return shlex.join(self.argv)


class Skip(BaseModel):
    model_config = ConfigDict(frozen=True)

    job_id: str
    reason: str


class Plan(BaseModel):
    adapter: str
    actions: list[Action] = []
    skips: list[Skip] = []

    def render(self) -> str:
        """Dry-run text: each command preceded by a comment saying why; skips last. Stable for diffs."""
        lines = [f"# schedmate adapt {self.adapter}: {len(self.actions)} actions, {len(self.skips)} skipped"]
        for a in self.actions:
            lines += [f"# {a.job_id} {a.kind.value}: {a.reason}", a.command()]
        lines += [f"# skip {s.job_id}: {s.reason}" for s in self.skips]
        return "\n".join(lines) + "\n"


class ApplyResult(BaseModel):
    action: Action
    ok: bool
    returncode: int | None = None
    output: str = ""
    """stderr (or stdout) of the command, trimmed; the error text when it could not run."""


def minutes_up(seconds: float) -> int:
    """Slurm's time resolution is one minute; round up so a limit never ends early."""
    return max(1, math.ceil(seconds / 60.0))


def priority_score(p50_s: float, cfg: AdapterConfig) -> float:
    """Log-scale position of a predicted runtime between short_s and long_s, rounded for stable output."""
    lo, hi = cfg.short_s, max(cfg.long_s, cfg.short_s * 1.0001)
    x = math.log(max(p50_s, 1e-9) / lo) / math.log(hi / lo)
    return round(min(1.0, max(0.0, x)), 3)


def summary(a: Annotation, limit: int) -> str:
    """Compact key=value text from typed fields only (never the free-text root cause)."""
    parts = [SUMMARY_PREFIX]
    if a.predicted_duration:
        d = a.predicted_duration
        parts.append(f"p10={d.p10:.0f}s p50={d.p50:.0f}s p90={d.p90:.0f}s")
    if a.predicted_remaining_s is not None:
        parts.append(f"remaining={a.predicted_remaining_s:.0f}s")
    sens = _sensitivity(a)
    if sens is not None:
        parts.append(f"net={sens:.2f}")
    if a.failure and a.failure.failed:
        parts.append(f"failure={a.failure.category.value}@{a.failure.confidence:.2f}")
    if a.provenance:
        parts.append("by=" + "+".join(sorted({p.component for p in a.provenance if p.component.isidentifier()})))
    return " ".join(parts)[:limit]


def facts(a: Annotation) -> dict[str, str]:
    out: dict[str, str] = {}
    if a.predicted_duration:
        d = a.predicted_duration
        out |= {"predicted-p10-s": f"{d.p10:.0f}", "predicted-p50-s": f"{d.p50:.0f}", "predicted-p90-s": f"{d.p90:.0f}"}
    if a.predicted_remaining_s is not None:
        out["predicted-remaining-s"] = f"{a.predicted_remaining_s:.0f}"
    sens = _sensitivity(a)
    if sens is not None:
        out["network-sensitivity"] = f"{sens:.2f}"
    if a.failure is not None:
        out["failure"] = a.failure.category.value if a.failure.failed else "none"
        out["failure-confidence"] = f"{a.failure.confidence:.2f}"
    return out


def _sensitivity(a: Annotation) -> float | None:
    if a.network_sensitivity is not None:
        return a.network_sensitivity
    if a.spread_slowdown is not None:
        return sensitivity_from_slowdown(a.spread_slowdown)
    return None


def decide(a: Annotation, job: JobView, cfg: AdapterConfig) -> Decision:
    """The platform-neutral decision for one job; pure, so it is tested on literal inputs."""
    d = Decision(job_id=a.job_id, summary=summary(a, cfg.summary_max_len), facts=facts(a))
    if job.phase is JobPhase.finished:
        d.notes.append(f"job already ended ({job.raw_state})")
        return d
    if job.phase is JobPhase.other:
        d.notes.append(f"job is {job.raw_state}: no decision in this state")
        return d

    f = a.failure
    if f is not None and f.failed:
        if f.confidence < cfg.min_confidence:
            d.notes.append(f"failure signal {f.category.value} at confidence {f.confidence:.2f} "
                           f"< {cfg.min_confidence:.2f}: not acted on")
        elif job.phase is not JobPhase.running:
            d.notes.append(f"failure signal {f.category.value} for a job that is not running ({job.raw_state})")
        else:
            recoverable = f.recoverable and f.action is FailureAction.restart_from_checkpoint
            d.failure = Verdict.requeue if recoverable and cfg.requeue_recoverable else Verdict.terminate
            return d  # a job being ended or restarted needs no new limit or priority

    _decide_time_limit(a, job, cfg, d)
    p50 = a.predicted_duration.p50 if a.predicted_duration else None
    if job.phase is JobPhase.pending and p50 is not None:
        d.priority_score = priority_score(p50, cfg)
    _decide_topology(a, job, cfg, d, p50)
    return d


def _decide_time_limit(a: Annotation, job: JobView, cfg: AdapterConfig, d: Decision) -> None:
    running = job.phase is JobPhase.running
    candidates: list[tuple[float, str]] = []
    if a.predicted_duration is not None:
        p90 = a.predicted_duration.p90
        if running and job.elapsed_s >= p90 and a.predicted_remaining_s is None:
            # The job already outlived its p90: the estimate is wrong, and tightening would kill it.
            d.notes.append(f"job already ran {job.elapsed_s:.0f} s, past its predicted p90 {p90:.0f} s: "
                           "time limit left alone")
            return
        candidates.append((p90 * cfg.time_limit_margin, f"p90 {p90:.0f} s x {cfg.time_limit_margin}"))
    if running and a.predicted_remaining_s is not None:
        candidates.append((job.elapsed_s + a.predicted_remaining_s * cfg.time_limit_margin,
                           (f"used {job.elapsed_s:.0f} s + remaining {a.predicted_remaining_s:.0f} s x "
                            f"{cfg.time_limit_margin}")))
    if not candidates:
        return
    # The larger of the two estimates: a stale code-based p90 must not cut short what the log still expects.
    target, basis = max(candidates)
    if running and target < job.elapsed_s + cfg.min_headroom_s:
        target, basis = job.elapsed_s + cfg.min_headroom_s, f"used {job.elapsed_s:.0f} s + headroom"
    d.time_limit_basis = basis
    target_s = minutes_up(target) * 60
    current = job.time_limit_s
    if current is not None and target_s > current and not cfg.allow_extend:
        d.notes.append(f"predicted limit {target_s} s is above the requested {current:.0f} s: "
                       "not extended (use --allow-extend)")
    elif current is not None and abs(target_s - current) < 60:
        pass  # already there: applying twice changes nothing
    else:
        d.time_limit_s = target_s


def _decide_topology(a: Annotation, job: JobView, cfg: AdapterConfig, d: Decision, p50: float | None) -> None:
    sens = _sensitivity(a)
    if job.phase is not JobPhase.pending or job.nodes < 2 or sens is None or sens < cfg.sensitivity_threshold:
        return
    slowdown = a.spread_slowdown or slowdown_from_sensitivity(sens)
    # Waiting longer than the time spreading would cost ((slowdown - 1) x runtime) never pays off.
    wait = (slowdown - 1.0) * p50 if p50 is not None else sens * cfg.max_topology_wait_s
    wait = min(wait, cfg.max_topology_wait_s)
    if wait < 60:
        d.notes.append(f"network-sensitive (net={sens:.2f}) but the worthwhile wait {wait:.0f} s is under a "
                       "minute: no topology constraint")
        return
    d.topology_wait_s = minutes_up(wait) * 60


class ClusterAdapter(ABC):
    """Connects annotations to one kind of cluster. Subclasses say how to read state and render a Decision."""

    name: str = ""

    def __init__(self, config: AdapterConfig | None = None) -> None:
        self.config = config or AdapterConfig()

    @abstractmethod
    def read_state(self) -> dict[str, JobView]:
        """Current jobs keyed by the id annotations use. Raises AdapterError when the cluster cannot be read."""

    @abstractmethod
    def parse_state(self, text: str, now: float | None = None) -> dict[str, JobView]:
        """The same from a saved dump (`squeue --json`, `kubectl get jobs -o json`); `now` is when it was
        taken (elapsed times are computed from start times)."""

    @abstractmethod
    def valid_id(self, job_id: str) -> bool:
        """Whether an annotation's job id is well formed for this platform (checked before any lookup)."""

    def state_key(self, job_id: str) -> str:
        """The key of `read_state()` an annotation's (valid) job id refers to."""
        return job_id

    @abstractmethod
    def render(self, decision: Decision, job: JobView) -> tuple[list[Action], list[Skip]]:
        """Commands that carry out one decision."""

    def plan(self, annotations: Iterable[Annotation], state: dict[str, JobView]) -> Plan:
        plan = Plan(adapter=self.name)
        for a in latest_per_job(annotations):
            if not self.valid_id(a.job_id):
                plan.skips.append(Skip(job_id=_printable(a.job_id), reason=f"malformed {self.name} job id"))
                continue
            job = state.get(self.state_key(a.job_id))
            if job is None:
                plan.skips.append(Skip(job_id=a.job_id, reason="no such job in the cluster"))
                continue
            d = decide(a, job, self.config)
            actions, skips = self.render(d, job)
            plan.actions += actions
            plan.skips += [Skip(job_id=a.job_id, reason=n) for n in d.notes] + skips
        return plan

    def apply(self, plan: Plan, dry_run: bool = True, out: TextIO | None = None,
              timeout_s: float = 60.0) -> list[ApplyResult]:
        """Dry run: print the plan. Otherwise run each command; after a failed command the job's
        remaining actions are skipped (they were planned assuming it succeeded), other jobs go on."""
        out = out or sys.stdout  # looked up now, so redirected output (tests, CliRunner) is honoured
        if dry_run:
            out.write(plan.render())
            return []
        results: list[ApplyResult] = []
        failed_jobs: set[str] = set()
        for a in plan.actions:
            if a.job_id in failed_jobs:
                results.append(ApplyResult(action=a, ok=False, output="skipped: an earlier command for this job failed"))
                continue
            r = run_argv(a, timeout_s)
            results.append(r)
            out.write(f"{'ok' if r.ok else 'FAILED'}: {a.command()}" + ("" if r.ok else f"\n  {r.output}") + "\n")
            if not r.ok and a.kind is not ActionKind.annotate:  # a missing summary blocks nothing
                failed_jobs.add(a.job_id)
        return results


def run_argv(action: Action, timeout_s: float) -> ApplyResult:
    try:
        p = subprocess.run(list(action.argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        return ApplyResult(action=action, ok=False, output=f"{action.argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return ApplyResult(action=action, ok=False, output=f"timed out after {timeout_s:.0f} s")
    text = (p.stderr or p.stdout).strip()
    return ApplyResult(action=action, ok=p.returncode == 0, returncode=p.returncode, output=text[-500:])


def read_command(argv: Sequence[str], timeout_s: float = 60.0) -> str:
    """stdout of a state-reading command; AdapterError with its stderr when it fails or is missing."""
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise AdapterError(f"{argv[0]}: command not found (is it installed and on PATH?)") from None
    except subprocess.TimeoutExpired:
        raise AdapterError(f"{shlex.join(argv)}: timed out after {timeout_s:.0f} s") from None
    if p.returncode != 0:
        raise AdapterError(f"{shlex.join(argv)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return p.stdout


def latest_per_job(annotations: Iterable[Annotation]) -> list[Annotation]:
    """Annotations are snapshots: the newest (largest made_at, then last in the file) wins. Order of
    first appearance is kept so plans are deterministic."""
    latest: dict[str, Annotation] = {}
    for a in annotations:
        if a.job_id not in latest or a.made_at >= latest[a.job_id].made_at:
            latest[a.job_id] = a
    return list(latest.values())


def load_annotations(path: Path) -> list[Annotation]:
    """JSON lines of `Annotation`; blank lines are ignored. AdapterError names the bad line."""
    try:
        text = path.read_text()
    except OSError as e:
        raise AdapterError(f"{path}: {e.strerror}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(Annotation.model_validate_json(line))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "line"
            raise AdapterError(f"{path}:{n}: not an Annotation: {where}: {first['msg']}") from None
    return out


def _printable(s: str, limit: int = 60) -> str:
    """For messages only: an id that failed validation, with control characters escaped."""
    return repr(s[:limit])[1:-1]


ADAPTERS: Registry[ClusterAdapter] = Registry("cluster adapter")
