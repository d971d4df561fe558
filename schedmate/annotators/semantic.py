"""`schedmate`: the semantic annotator. Code analyzer + history + log monitor, through the local LLM.

At submission (for a job with semantic material, `Job.semantic.workdir`):
* the code analyzer profiles the job's code and launch command (static pass; the LLM for fields the
  static pass leaves open; version cache so resubmitted variants cost nothing) -> network sensitivity
  and the expected slowdown when spread, the configured steps, the model;
* the history predictor fuses the neighbours (same user first), the user's habits and a work
  estimate: configured steps x the iteration time measured in the logs of earlier jobs with the same
  model, batch and GPU count.
While running (every `monitor_interval_s`): the log monitor reads what the job's log gained since the
last look -> progress, iteration time, remaining time (p10/p50/p90), and failure signals, which the
adapters turn into decisions (`adapters/simulated.py`).

Job code and logs are untrusted data: the analyzers never execute them, and what they say can only
change the annotation through the checks of the code analyzer (static facts win, LLM numbers are
bounded) and the log monitor (rules win; a line that addresses the model is never sent to it).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from schedmate.annotators.base import ANNOTATORS
from schedmate.annotators.history import HistoryAnnotator
from schedmate.history.predictor import CodeEstimate, Progress, StopHabits
from schedmate.records import (
    Annotation,
    DurationEstimate,
    Job,
    Provenance,
    slowdown_from_sensitivity,
)

REACHED_TARGET = 0.98
"""A run whose last logged step is this close to its target ran as configured (logs every N steps)."""
HABIT_PRIOR = 5.0
"""Pseudo-runs at everyone's early-end share that a user's own share is smoothed with."""


@dataclass(frozen=True)
class _Measured:
    """What one job's log showed about its shape."""

    num_gpus: int
    iteration_time_s: float
    batches_per_epoch: float | None
    """Steps per epoch x GPUs (the dataset in per-GPU batches), for epoch-based jobs."""


class _LogCursor:
    """Reads the bytes a log file gained since the last look, into one log monitor per job."""

    def __init__(self, path: Path, use_llm: bool, offset: int = 0, attempt: Any = None) -> None:
        from schedmate.logmon.cli import make_monitor

        self.path = path
        self.offset = offset
        self.attempt = attempt
        self.calls_counted = 0
        """LLM calls of this monitor already added to the annotator's stats."""
        self.monitor = make_monitor(str(path), use_llm=use_llm)

    def poll(self):
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return None
        if data:
            self.offset += len(data)
            self.monitor.feed_bytes(data)
        return self.monitor.report()

    def tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens this job's log monitor has spent (its own client; 0 on rules only)."""
        assistant = self.monitor.assistant
        usage = getattr(getattr(assistant, "client", None), "usage", None)
        if usage is None:
            return 0, 0
        from schedmate.logmon.assist import COMPONENT

        u = usage.get(COMPONENT)
        return u.prompt_tokens, u.completion_tokens


@ANNOTATORS.register("schedmate")
class SemanticAnnotator(HistoryAnnotator):
    name = "schedmate"

    def __init__(self, use_llm: bool | None = None, monitor_interval_s: float = 600.0,
                 embedder: str = "hashed", first_look_s: float = 10.0, **history_options: Any) -> None:
        if use_llm is None:  # a server named in the environment (e.g. a shared one), else one we serve
            import os

            from schedmate.llm import serving

            use_llm = bool(os.environ.get("SCHEDMATE_LLM_BASE_URL")) or serving.running_server() is not None
        self.use_llm = use_llm
        self.monitor_interval_s = monitor_interval_s
        self.first_look_s = first_look_s
        self._profiles: dict[str, Any] = {}
        self._measured: dict[tuple, dict[str, _Measured]] = {}
        """(model, micro batch, sequence length) -> {job id: what its log showed}."""
        self._cursors: dict[str, _LogCursor] = {}
        self.predictions: dict[str, list[tuple[float, DurationEstimate]]] = {}
        """job id -> [(seconds run so far, predicted total run time p10/p50/p90)]: at submission, then at
        each look that refined it (for accuracy and calibration reports)."""
        self.stats = {"jobs": 0, "profiled": 0, "code_llm_calls": 0, "log_llm_calls": 0, "annotate_s": 0.0,
                      "log_looks": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._cache = None
        self._ended_early: list[float] = []
        """The step fractions at which finished runs ended before their target (everyone's)."""
        self._ends_by_user: dict[str | None, list[int]] = {}
        """user -> [finished runs with a known end fraction, of which ended before their target]."""
        self._early_array: np.ndarray | None = None  # `_ended_early` as an array, until the next end
        super().__init__(embedder=embedder, profiles=self._profile_summary, code_estimates=self._code_estimate,
                         stop_habits=self._stop_habits, **history_options)

    # -------------------------------------------------------------------------------- code
    def _profile(self, job: Job) -> Any:
        if job.id in self._profiles:
            return self._profiles[job.id]
        prof = None
        sem = job.semantic
        if sem is not None and sem.workdir:
            from schedmate.codeprof.cache import VersionCache

            if self._cache is None:
                self._cache = VersionCache()
            try:
                prof = self._cache.analyze(sem.workdir, command=sem.command, use_llm=self.use_llm)
                self.stats["profiled"] += 1
                self.stats["code_llm_calls"] += prof.llm_calls
                self.stats["prompt_tokens"] += int(prof.extras.get("prompt_tokens", 0))
                self.stats["completion_tokens"] += int(prof.extras.get("completion_tokens", 0))
            except (OSError, ValueError) as e:  # unreadable or hostile workdir: metadata only
                prof = None
                self.stats.setdefault("profile_errors", []).append(f"{job.id}: {e}")
        self._profiles[job.id] = prof
        return prof

    def _profile_summary(self, job: Job) -> Any:
        prof = self._profile(job)
        if prof is None:
            return None
        return {k: prof.value(k) for k in ("framework", "model_name", "num_gpus", "train_steps", "micro_batch_size")}

    @staticmethod
    def _shape(prof: Any) -> tuple:
        return (prof.value("model_name"), prof.value("micro_batch_size"), prof.value("seq_len"))

    def _code_estimate(self, job: Job) -> CodeEstimate | None:
        """Configured steps (or epochs x steps per epoch) x the iteration time that earlier jobs of the same
        model, micro batch and sequence length showed in their logs: on the same GPU count when there are
        such jobs, else on any (data-parallel weak scaling: the per-GPU batch sets the step time, and an
        epoch has as many steps as the dataset holds global batches), at a lower confidence."""
        prof = self._profile(job)
        if prof is None:
            return None
        seen = self._measured.get(self._shape(prof))
        if not seen:
            return None
        same = [m for m in seen.values() if m.num_gpus == job.num_gpus]
        pool, confidence = (same, 0.7) if same else (list(seen.values()), 0.5)
        steps = prof.value("train_steps")
        epochs = prof.value("epochs")
        if not steps and epochs:
            per_epoch = [m.batches_per_epoch / max(1, job.num_gpus) for m in pool if m.batches_per_epoch]
            if per_epoch:
                steps = max(1, round(float(epochs) * statistics.median_high(per_epoch)))
                confidence -= 0.1
        if not steps:
            return None
        return CodeEstimate(total_steps=int(steps), iteration_time_s=statistics.median_high([m.iteration_time_s for m in pool]),
                            confidence=confidence)

    def _stop_habits(self, job: Job) -> StopHabits | None:
        """How often runs end before their target (this user's share smoothed towards everyone's by
        `HABIT_PRIOR` pseudo-runs) and at which fractions (everyone's: more data than one user's)."""
        total = sum(n for n, _ in self._ends_by_user.values())
        if total == 0:
            return None
        if self._early_array is None:
            self._early_array = np.array(self._ended_early)
        base = len(self._ended_early) / total
        n, early = self._ends_by_user.get(job.user, (0, 0))
        p = (early + HABIT_PRIOR * base) / (n + HABIT_PRIOR)
        return StopHabits(p_stop=p, fractions=self._early_array)

    def _remember(self, job: Job, prof: Any, prog: Any) -> None:
        """Keep what this job's log shows about its shape (the latest look wins)."""
        if not prog.iteration_time_s:
            return
        per_epoch = None
        if prog.total_epochs and prog.steps_done is not None and prog.steps_left is not None:
            per_epoch = (prog.steps_done + prog.steps_left) / prog.total_epochs * max(1, job.num_gpus)
        self._measured.setdefault(self._shape(prof), {})[job.id] = _Measured(
            job.num_gpus, prog.iteration_time_s, per_epoch)

    # -------------------------------------------------------------------------------- annotator
    def reset(self, seed: int) -> None:
        super().reset(seed)
        self._profiles.clear()
        self._measured.clear()
        self._ended_early.clear()
        self._ends_by_user.clear()
        self._early_array = None
        self._cursors.clear()
        self.predictions.clear()
        self.stats.pop("profile_errors", None)
        for k in self.stats:
            self.stats[k] = 0.0 if k == "annotate_s" else 0

    def on_submit(self, job: Job, now: float) -> Annotation:
        t0 = time.perf_counter()
        base = super().on_submit(job, now)
        prof = self._profile(job)
        sens = prof.value("network_sensitivity") if prof is not None else None
        self.stats["jobs"] += 1
        self.stats["annotate_s"] += time.perf_counter() - t0
        calls = prof.llm_calls if prof is not None else 0
        if base.predicted_duration is not None:
            self.predictions[job.id] = [(0.0, base.predicted_duration)]
        prov = base.provenance + (Provenance(component="code", llm_calls=calls,
                                             latency_s=time.perf_counter() - t0),)
        return base.model_copy(update={
            "network_sensitivity": sens,
            "spread_slowdown": slowdown_from_sensitivity(sens) if sens is not None else None,
            "provenance": prov,
        })

    def monitor_delay(self, js: Any, run_s: float) -> float:
        """Looks at `first_look_s`, then each time the run has doubled, until `monitor_interval_s`: a
        short job gets a look between 25 % and 50 % of its run, and early crashes are caught early,
        at the price of a few more reads of a short log (the rules read it; the LLM sees only new
        unknown lines, so its calls do not grow)."""
        return max(1.0, min(self.monitor_interval_s, max(self.first_look_s, run_s)))

    def on_running(self, sim: Any, js: Any, now: float) -> Annotation | None:
        sem = js.job.semantic
        if sem is None or not sem.log_source:
            return None
        cursor = self._cursors.get(js.job.id)
        attempt = js.extra.get("_run")
        if cursor is None or cursor.attempt != attempt:
            # A restarted job (preempted, requeued) is a new process: read its log from where the last
            # attempt stopped with a fresh monitor, so the time it spent stopped is not taken for a hang.
            offset = 0
            if cursor is not None:
                offset = cursor.offset
                self._retire(cursor)
            cursor = self._cursors[js.job.id] = _LogCursor(Path(sem.log_source), self.use_llm, offset, attempt)
        t0 = time.perf_counter()
        report = cursor.poll()
        self.stats["log_looks"] += 1
        if report is None:
            return None
        self.stats["log_llm_calls"] += report.llm_calls - cursor.calls_counted
        cursor.calls_counted = report.llm_calls
        self.stats["annotate_s"] += time.perf_counter() - t0
        prog = report.progress
        prof = self._profile(js.job)
        if prof is not None:
            self._remember(js.job, prof, prog)
        ann = js.annotation
        update: dict[str, Any] = {"made_at": now}
        if report.failure.failed:
            from schedmate.logmon.report import annotation_fields

            update.update(annotation_fields(report))
        elif prog.current_step:
            elapsed = max(0.0, js.executed_at(now))
            done, total = self._steps(prog, prof)
            rem = self.predictor.refine(Progress(current_step=done, total_steps=total,
                                                 iteration_time_s=prog.iteration_time_s, elapsed_s=elapsed),
                                        self.evidence.get(js.job.id), self._stop_habits(js.job))
            if rem is not None:
                total = DurationEstimate(p10=elapsed + rem.p10, p50=elapsed + rem.p50, p90=elapsed + rem.p90)
                self.predictions.setdefault(js.job.id, []).append((elapsed, total))
                update["predicted_remaining_s"] = rem.p50
                update["predicted_duration"] = total
        else:
            return None
        return ann.model_copy(update=update)

    @staticmethod
    def _steps(prog: Any, prof: Any) -> tuple[int, int | None]:
        """(steps done, steps in the whole run) from the log monitor's progress, epochs folded in; the
        code's configured steps only when the log names no target and counts steps over the whole run."""
        done = prog.steps_done if prog.steps_done is not None else prog.current_step
        if prog.steps_left is not None:
            return done, done + prog.steps_left
        if prog.epoch is None and prog.total_steps is None and prof is not None:
            steps = prof.value("train_steps")
            return done, int(steps) if steps and steps >= done else None
        if prog.epoch is None and prog.total_steps:
            return done, prog.total_steps
        epochs = prof.value("epochs") if prof is not None else None
        if prog.epoch is not None and prog.total_steps and epochs:  # per-epoch counter, epochs from the code
            total = int(epochs) * prog.total_steps
            return done, total if total >= done else None
        return done, None

    def cost_summary(self) -> dict[str, Any]:
        """LLM calls and tokens per job, and annotation seconds per job, over this replay (cache hits cost
        no call and no token; a profile answered from the version cache costs neither)."""
        jobs = max(1, self.stats["jobs"])
        calls = self.stats["code_llm_calls"] + self.stats["log_llm_calls"]
        live = [c.tokens() for c in self._cursors.values()]  # jobs still running when asked
        prompt = self.stats["prompt_tokens"] + sum(t[0] for t in live)
        completion = self.stats["completion_tokens"] + sum(t[1] for t in live)
        return {
            "jobs": self.stats["jobs"], "profiled": self.stats["profiled"], "llm": self.use_llm,
            "llm_calls": calls, "llm_calls_per_job": calls / jobs,
            "code_llm_calls": self.stats["code_llm_calls"], "log_llm_calls": self.stats["log_llm_calls"],
            "prompt_tokens": prompt, "completion_tokens": completion,
            "tokens_per_job": (prompt + completion) / jobs,
            "log_looks": self.stats["log_looks"], "annotate_s_per_job": self.stats["annotate_s"] / jobs,
        }

    def _retire(self, cursor: _LogCursor) -> None:
        """A cursor is done (its job ended or restarted): keep the tokens its monitor spent."""
        prompt, completion = cursor.tokens()
        self.stats["prompt_tokens"] += prompt
        self.stats["completion_tokens"] += completion

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        super().on_finish(job, now, runtime_s)
        cursor = self._cursors.pop(job.id, None)
        if cursor is not None:
            self._retire(cursor)
        sem, prof = job.semantic, self._profile(job)
        if sem is None or not sem.log_source:
            return
        # Read the finished log once, rules only (a last read must not cost LLM calls): where the run
        # ended against its target teaches the stop habits, and a job that ended before any look still
        # measured its shape's iteration time for the jobs to come.
        report = _LogCursor(Path(sem.log_source), use_llm=False).poll()
        if report is None:
            return
        prog = report.progress
        if prog.steps_done is not None and prog.steps_left is not None and prog.steps_done + prog.steps_left > 0:
            ended = prog.steps_done / (prog.steps_done + prog.steps_left)
            counts = self._ends_by_user.setdefault(job.user, [0, 0])
            counts[0] += 1
            if ended < REACHED_TARGET:
                counts[1] += 1
                self._ended_early.append(ended)
                self._early_array = None
        if prof is not None and job.id not in self._measured.get(self._shape(prof), {}):
            self._remember(job, prof, prog)
