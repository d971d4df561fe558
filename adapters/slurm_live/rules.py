"""The watcher's decisions for one running job, pure: extend its limit, end it, or leave it alone.

* **Progress** is the log monitor's step count (`steps_done`) going up between looks; bytes alone are not
  progress (a job can print warnings forever).
* **Extend** while the job progresses and its remaining time (the monitor's estimate x margin, plus two
  watcher intervals, since the next look may come late) exceeds what its limit leaves: the new limit is
  that much, rounded up to Slurm's minutes, and never beyond the user's request. Without a remaining-time
  estimate, a progressing job about to run out gets `unknown_step_s` more (again capped).
* **Hang**: no new step for the hang window, `max(hang_after_s, hang_factor x iteration time, 3 x the mean
  gap between progress looks)`, once the pace is known (an iteration time in the log, or two progress
  looks). Not judged once the log says training finished (saving a checkpoint prints nothing and must
  not be killed).
* **Failure**: a log failure signal at or above `min_confidence` is acted on only when it is still standing
  at the next look with no progress in between (a caught traceback followed by more steps is dismissed
  by the monitor, and by this rule).

Never a limit is lowered: a job that runs faster than predicted keeps the limit it has.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from adapters.base import minutes_up
from schedmate.records import FailureAction, FailureCategory, FailureSignal


class WatchConfig(BaseModel):
    """`schedmate watch slurm` settings; each docstring is the option's help."""

    model_config = {"frozen": True}

    interval_s: float = Field(default=30.0, gt=0)
    """Seconds between looks at squeue and the logs."""
    margin: float = Field(default=1.25, ge=1.0)
    """An extension covers the remaining-time estimate x this."""
    unknown_step_s: float = Field(default=600.0, gt=0)
    """Extension for a progressing job whose log gives no remaining time."""
    hang_after_s: float = Field(default=1800.0, ge=0)
    """Shortest time without a new step that counts as a hang (0: never judge hangs)."""
    hang_factor: float = Field(default=20.0, ge=1.0)
    """...or this many iteration times, whichever is longer."""
    min_confidence: float = Field(default=0.8, ge=0, le=1)
    """Log failure signals below this confidence are reported, never acted on."""
    max_requeues: int = Field(default=1, ge=0)
    """A recoverable failure (or a hang) requeues a job this many times; after that, or for a job that is
    not requeueable, it is cancelled."""


class JobMemory(BaseModel):
    """What the watcher remembers about one job between looks (kept in the state file)."""

    service_id: str
    attempt: int = 0
    """Slurm's restart count when this memory began: a requeued job starts a new memory (and a new log)."""
    offset: int = 0
    cap_s: float | None = None
    cap_known: bool = False
    steps: int | None = None
    step_events: int = 0
    first_progress_at: float | None = None
    last_progress_at: float | None = None
    iteration_s: float | None = None
    remaining_s: float | None = None
    training_done: bool = False
    failure: dict[str, Any] | None = None
    """A failure signal seen at the last look, waiting to be confirmed by the next."""
    stopped: str | None = None
    """Why the job's log is no longer followed (said once); no decision is made without it."""
    finished: bool = False
    said: str = ""
    """The last verdict reported, so a dry run does not repeat itself every interval."""

    def new_attempt(self, attempt: int) -> JobMemory:
        return JobMemory(service_id=self.service_id, attempt=attempt, cap_s=self.cap_s, cap_known=self.cap_known)


class Verdict(BaseModel):
    kind: Literal["none", "extend", "fail"] = "none"
    limit_s: int | None = None
    signal: FailureSignal | None = None
    reason: str = ""


def observe(mem: JobMemory, body: dict[str, Any] | None, now: float, cfg: WatchConfig) -> FailureSignal | None:
    """Fold one look into the memory: `body` is the service's answer to the new log chunk, None when the
    log has not grown. Returns a failure signal once it is confirmed (seen at two looks, no step between)."""
    progressed = False
    if body is not None:
        prog = body.get("progress") or {}
        steps = prog.get("steps_done") if prog.get("steps_done") is not None else prog.get("current_step")
        if isinstance(steps, int) and (mem.steps is None or steps > mem.steps):
            progressed = True
            mem.step_events += 1
            mem.first_progress_at = mem.first_progress_at or now
            mem.last_progress_at = now
            mem.steps = steps
        if isinstance(prog.get("iteration_time_s"), (int, float)):
            mem.iteration_s = float(prog["iteration_time_s"])
        ann = body.get("annotation") or {}
        mem.remaining_s = ann.get("predicted_remaining_s")
        mem.training_done = bool(body.get("finished"))
        f = ann.get("failure") or {}
        if not (f.get("failed") and float(f.get("confidence", 0)) >= cfg.min_confidence):
            mem.failure = None
            return None
        if mem.failure is None or mem.failure.get("category") != f.get("category") or progressed:
            mem.failure = f
            return None
    if mem.failure is not None and not progressed:
        return FailureSignal.model_validate(mem.failure)
    return None


def hang_window(mem: JobMemory, cfg: WatchConfig) -> float:
    gap = 0.0
    if mem.step_events >= 2 and mem.first_progress_at is not None and mem.last_progress_at is not None:
        gap = (mem.last_progress_at - mem.first_progress_at) / (mem.step_events - 1)
    return max(cfg.hang_after_s, cfg.hang_factor * (mem.iteration_s or 0.0), 3.0 * gap)


def hang(mem: JobMemory, now: float, cfg: WatchConfig) -> FailureSignal | None:
    if cfg.hang_after_s <= 0 or mem.training_done or mem.last_progress_at is None:
        return None
    if mem.step_events < 2 and mem.iteration_s is None:
        return None  # one look at a log without an iteration time: no pace to judge against
    idle, window = now - mem.last_progress_at, hang_window(mem, cfg)
    if idle <= window:
        return None
    return FailureSignal(category=FailureCategory.hang, failed=True, confidence=1.0, recoverable=True,
                         action=FailureAction.restart_from_checkpoint,
                         root_cause=f"no new step for {idle:.0f} s after step {mem.steps} (hang window {window:.0f} s)")


def extension(mem: JobMemory, elapsed_s: float, limit_s: float | None, now: float, cfg: WatchConfig) -> Verdict:
    if limit_s is None or not mem.cap_known or mem.last_progress_at is None:
        return Verdict()
    if not mem.training_done and now - mem.last_progress_at > hang_window(mem, cfg):
        return Verdict()
    left = limit_s - elapsed_s
    slack = 2 * cfg.interval_s
    if mem.remaining_s is not None and not mem.training_done:
        need = mem.remaining_s * cfg.margin + slack
        basis = f"remaining {mem.remaining_s:.0f} s x {cfg.margin:g} + {slack:.0f} s > {max(left, 0):.0f} s left"
    elif left <= slack + 60:
        need = cfg.unknown_step_s
        basis = f"progressing, remaining time unknown, {max(left, 0):.0f} s left: +{need:.0f} s"
    else:
        return Verdict()
    if need <= left:
        return Verdict()
    target = minutes_up(elapsed_s + need) * 60
    if mem.cap_s is not None and target > mem.cap_s:
        target = int(mem.cap_s)
        basis += f"; capped at the user's request ({mem.cap_s / 60:.0f} min)"
    if target <= limit_s:
        return Verdict()
    return Verdict(kind="extend", limit_s=target, reason=basis)


def judge(mem: JobMemory, body: dict[str, Any] | None, elapsed_s: float, limit_s: float | None, now: float,
          cfg: WatchConfig) -> Verdict:
    """One look at one running job: observe, then a confirmed failure, a hang, or an extension."""
    failure = observe(mem, body, now, cfg)
    if failure is not None:
        return Verdict(kind="fail", signal=failure,
                       reason=f"log failure {failure.category.value} at confidence {failure.confidence:.2f}, "
                              "still standing at the next look")
    stuck = hang(mem, now, cfg)
    if stuck is not None:
        return Verdict(kind="fail", signal=stuck, reason=stuck.root_cause or "hang")
    return extension(mem, elapsed_s, limit_s, now, cfg)
