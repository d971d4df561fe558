"""Framework-style training logs written *inside* the simulator, from its view of each job's progress.

`LogWriter.update(js, now)` appends the lines for the progress a running job made since the last call:
steps come from `JobState.work_done` (consolidated seconds) through the job's plan (start-up, warm-up,
iterations, eval and checkpoint pauses); each line's timestamp is the simulated wall time at which that
work was reached, so iteration times are `nominal / speed` for the placement and congestion the job
actually had. Reported figures (ms per iteration, samples/s) carry a seeded +-3 % jitter.
`LogWriter.finish(job, now, runtime_s)` writes the end: the framework's done line, an early-stopping
message, the failure tail of the job's category (OOM traceback, NCCL watchdog, NaN loss, ...), or, for a
hang, nothing more (progress lines stop at `hang_onset_s` while the job keeps running; monitor heartbeat
lines without progress are written meanwhile). A restarted attempt (preemption) logs a resume from the
last checkpoint and repeats the lost steps.

`SemanticLogAnnotator(inner)` wraps any annotator: the engine calls its `on_running` every
`monitor_interval_s`, which writes the logs and then asks the inner annotator (e.g. a log monitor reading
these files). Logs go to `Job.semantic.log_source`. Simulated time 0 is `EPOCH0` (2025-01-01 UTC).
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import TYPE_CHECKING

from schedmate.annotators.base import Annotator
from schedmate.records import Annotation, Job
from schedmate.semantic.augment import Plan, load_plan
from schedmate.semantic.catalogue import TEMPLATES
from schedmate.semantic.log_styles import (
    EPOCH0,
    STYLES,
    _iso,
)

if TYPE_CHECKING:
    from schedmate.sim.state import JobState
    from schedmate.sim.view import SchedulerView


# ----------------------------------------------------------------------------- failure tails
def failure_tail(category: str, variant: int, step: int, rng: random.Random) -> list[str]:
    """Lines a job of this failure category prints when it dies (our wording, in the frameworks' style)."""
    r = rng.randrange(8)
    pid = rng.randint(1000, 99999)
    v = variant % 2
    if category == "oom":
        if v == 0:
            return ["Traceback (most recent call last):", '  File "train.py", line 141, in <module>',
                    "    loss.backward()",
                    (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {rng.choice([1.0, 2.0, 3.5])} GiB. "
                    f"GPU {r} has a total capacity of 79.15 GiB of which 812.00 MiB is free.")]
        return [f"Out of memory: Killed process {pid} (python) total-vm:98123456kB, anon-rss:91234567kB",
                (f"slurmstepd: error: Detected 1 oom-kill event(s) in StepId={pid}.0. Some of your processes may have "
                "been killed by the cgroup out-of-memory handler.")]
    if category == "nccl":
        if v == 0:
            return [(f"[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
                    f"WorkNCCL(SeqNum={step * 3}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
                    "for 600417 milliseconds before timing out."),
                    "terminate called after throwing an instance of 'c10::DistBackendError'"]
        return ["Traceback (most recent call last):", '  File "train.py", line 97, in train_step',
                "    dist.all_reduce(t)",
                ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
                "1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5")]
    if category == "dataloader":
        if v == 0:
            return ["Traceback (most recent call last):",
                    '  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1133, in _try_get_data',
                    f"RuntimeError: DataLoader worker (pid {pid}) is killed by signal: Killed."]
        return ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
                "Traceback (most recent call last):", f"RuntimeError: DataLoader worker (pid(s) {pid}) exited unexpectedly"]
    if category == "segfault":
        if v == 0:
            return ["Fatal Python error: Segmentation fault", "",
                    "Thread 0x00007f3a2b1c (most recent call first):",
                    '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1532 in _call_impl',
                    "Segmentation fault (core dumped)"]
        return [f"Signal 11 (SIGSEGV) received by PID {pid}",
                "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) local_rank: 0"]
    if category == "node":
        if v == 0:
            return [f"NVRM: Xid (PCI:0000:{rng.choice(['3b', '86', 'af'])}:00): 79, pid={pid}, GPU has fallen off the bus.",
                    "RuntimeError: CUDA error: unspecified launch failure"]
        return ["Traceback (most recent call last):", '  File "train.py", line 120, in <module>',
                "RuntimeError: CUDA error: uncorrectable ECC error encountered"]
    if category == "preempted":
        return ["WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, shutting down workers",
                f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {pid} closing signal SIGTERM"]
    if category == "user_code":
        if v == 0:
            return ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>',
                    "    batch = collate(samples)", '  File "data.py", line 41, in collate',
                    "    labels = [s['labels'] for s in samples]", "KeyError: 'labels'"]
        return ["Traceback (most recent call last):", '  File "train.py", line 203, in <module>',
                "    torch.save(model.state_dict(), os.path.join(args.out_dir, 'final.pt'))",
                "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/run/final.pt'"]
    if category == "nan":
        return [("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. "
                "Try lowering the learning rate.")]
    if category == "other":
        return ["terminate called after throwing an instance of 'std::runtime_error'",
                "  what():  shard index out of range in packed dataset", "Aborted (core dumped)"]
    return []


ELASTIC_EXIT = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: {pid}) of binary: /usr/bin/python3"


# ----------------------------------------------------------------------------- per-job writer
class JobLog:
    """The log of one job: appends lines as the simulator reports progress."""

    def __init__(self, plan: Plan, path: Path) -> None:
        self.plan = plan
        self.path = path
        self.rng = random.Random(plan.log_seed)
        self.style = STYLES[TEMPLATES[plan.template].style](plan, self.rng)
        self.step = 0
        """Last step whose line (or position) is accounted for."""
        self.last_w = 0.0
        self.last_t: float | None = None
        self.attempt: object = None
        self.started = False
        self.done = False
        self.hung_reported_t = -math.inf
        self.loss0 = self.rng.uniform(6.0, 10.5)
        self.loss_floor = self.rng.uniform(0.8, 2.5)
        self.tau = max(10.0, plan.params["steps"] * self.rng.uniform(0.1, 0.3))
        if TEMPLATES[plan.template].kinds == {"eval"}:  # an evaluation's running loss is flat
            self.loss0 = self.loss_floor
        self.jitter = 0.03
        self.buf: list[str] = []

    # -- helpers
    def _line(self, t: float, text: str, stamp: bool = True) -> None:
        if stamp and (not self.style.own_ts):
            self.buf.append(_iso(t, sep="T", comma=False) + "Z " + text)  # the log collector's timestamp
        elif stamp:
            self.buf.append(self.style.ts(t) + text)
        else:
            self.buf.append(text)

    def _lines(self, t: float, texts: list[str], stamp: bool = True) -> None:
        for x in texts:
            self._line(t, x, stamp)

    def _loss_at(self, step: int) -> float:
        clean = self.loss_floor + (self.loss0 - self.loss_floor) * math.exp(-step / self.tau)
        return clean * self.rng.uniform(0.98, 1.02)

    def flush(self) -> None:
        if self.buf:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write("\n".join(self.buf) + "\n")
            self.buf.clear()

    def _start(self, t: float) -> None:
        self.style.t_start = t  # type: ignore[attr-defined]
        self._lines(t, self.style.header(t))
        self.started = True

    def _stop_work(self) -> float:
        """Work after which no progress line is written (hang onset, else the trace end)."""
        h = self.plan.hang_onset_s
        return min(self.plan.duration_s, h) if h is not None else self.plan.duration_s

    # -- progress
    def advance(self, t0: float, w0: float, t1: float, w1: float, speed: float) -> None:
        """Write the lines for the progress from work w0 (at time t0) to w1 (at time t1)."""
        plan, p = self.plan, self.plan.params
        if not self.started:
            self._start(t0)
        if w1 <= w0 or t1 <= t0:
            self.last_w, self.last_t = max(w1, self.last_w), t1
            return
        rate = (w1 - w0) / (t1 - t0)  # consolidated seconds per wall second in this segment (= average speed)
        stop = min(w1, self._stop_work())
        total = int(p["steps"])
        le, ee, ce = int(p["log_every"]), int(p["eval_every"]), int(p["ckpt_every"])

        def wall(w: float) -> float:
            return t0 + (w - w0) / rate

        s = self.step
        while s < total:
            nxt = min(total, (s // le + 1) * le)
            for boundary in (ee, ce):  # do not jump over an eval/checkpoint point
                if boundary and (s // boundary + 1) * boundary < nxt:
                    nxt = (s // boundary + 1) * boundary
            w_n = plan.work_at_step(nxt)
            if w_n > stop + 1e-6:
                break
            t_n = wall(w_n)
            if nxt % le == 0 or nxt == total:
                # wall seconds per iteration over this logging interval (pauses excluded), as the framework prints it
                span = nxt - s
                warm = min(nxt, plan.warmup_steps) - min(s, plan.warmup_steps)
                it = (span + warm) * plan.iter_s / span / rate
                it *= self.rng.uniform(1 - self.jitter, 1 + self.jitter)
                loss = self._loss_at(nxt)
                if plan.failure_category == "nan" and plan.duration_s - w_n < 4 * le * plan.iter_s:
                    loss = float("nan")
                self._lines(t_n, self.style.progress(t_n, nxt, it, loss))
            if ee and nxt % ee == 0 and nxt < total:
                self._lines(t_n, self.style.eval(t_n, nxt, self._loss_at(nxt)))
            if ce and nxt % ce == 0 and nxt < total:
                t_c = wall(w_n + (plan.eval_pause_s if ee and nxt % ee == 0 else 0.0))
                if t_c <= t1:
                    self._lines(t_c, self.style.ckpt(t_c, nxt))
            s = nxt
        self.step = s
        # a hung job: no progress, but the node's monitoring keeps printing
        if plan.hang_onset_s is not None and w1 > plan.hang_onset_s and t1 - self.hung_reported_t >= 300:
            stamp = self.style.ts(t1) or _iso(t1, sep="T", comma=False) + "Z "  # always timestamped
            self._line(t1, stamp + f"system-monitor gpu_util=0% mem_used={self.rng.uniform(30, 70):.1f}GiB "
                           f"host_load={self.rng.uniform(0.1, 1.0):.2f}", stamp=False)
            self.hung_reported_t = t1
        self.last_w, self.last_t = w1, t1

    def restart(self, t: float, w: float) -> None:
        """A new attempt starting at time t with w consolidated seconds of progress kept (the checkpoint)."""
        if not self.started:
            self._start(t)
        else:
            self._lines(t, self.style.header(t))
        s = self.plan.step_at_work(w)
        s = s // int(self.plan.params["log_every"]) * int(self.plan.params["log_every"])  # the last saved step
        if s > 0:
            self._lines(t, self.style.resume(t, s))
        self.step = s
        self.last_w, self.last_t = w, t

    def end(self, t: float, ended_by: str = "trace") -> None:
        """The job left the simulator at t: write its end as the trace recorded it."""
        if self.done:
            return
        self.done = True
        plan = self.plan
        if ended_by != "trace":  # the scheduler killed it (e.g. on a failure signal): the log just stops
            self.flush()
            return
        loss = self._loss_at(self.step)
        if plan.outcome == "completed":
            if plan.early_stop:
                self._lines(t, self.style.early_stop(t, self.step, loss))
            self._lines(t, self.style.done(t, self.step, loss))
        elif plan.outcome == "failed" and plan.failure_category not in (None, "hang"):
            self._lines(t, failure_tail(plan.failure_category, plan.failure_variant, self.step, self.rng), stamp=False)
            if self.rng.random() < 0.5 and plan.params["num_gpus"] > 1:
                self._line(t, ELASTIC_EXIT.format(pid=self.rng.randint(1000, 99999)), stamp=False)
        elif plan.outcome == "timeout":
            self._line(t, f"slurmstepd: error: *** JOB {self.rng.randint(100000, 999999)} ON node{self.rng.randint(1, 64):03d} "
                          f"CANCELLED AT {_iso(t, sep='T', ms=False)} DUE TO TIME LIMIT ***", stamp=False)
        self.flush()


class LogWriter:
    """Writes every augmented job's log from the simulator's state; one instance per replay."""

    def __init__(self) -> None:
        self.logs: dict[str, JobLog] = {}
        self.states: dict[str, JobState] = {}

    def reset(self) -> None:
        self.logs.clear()
        self.states.clear()

    def _log(self, job: Job) -> JobLog | None:
        lg = self.logs.get(job.id)
        if lg is None:
            if job.semantic is None or job.semantic.log_source is None or job.semantic.workdir is None:
                return None
            plan = load_plan(job)
            path = Path(job.semantic.log_source)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")  # a replay starts the log afresh
            lg = self.logs[job.id] = JobLog(plan, path)
        return lg

    def update(self, js: JobState, now: float) -> None:
        """Called for a running job (work_done must be advanced to `now`, as the engine does before
        `on_running`)."""
        lg = self._log(js.job)
        if lg is None or lg.done:
            return
        self.states[js.job.id] = js
        attempt = (js.extra.get("_run"), js.last_start)
        if attempt != lg.attempt:
            lg.attempt = attempt
            w_start = max(0.0, js.work_done - js.speed * (now - js.last_start))
            lg.restart(js.last_start, w_start)
        lg.advance(lg.last_t if lg.last_t is not None else js.last_start, lg.last_w, now, js.work_done, js.speed)
        lg.flush()

    def finish(self, job: Job, now: float, runtime_s: float) -> None:
        """The job ended at `now` (trace end, or terminated by the scheduler)."""
        lg = self._log(job)
        if lg is None or lg.done:
            return
        js = self.states.pop(job.id, None)
        if js is not None:
            w1, ended_by = js.work_done, js.ended_by
            attempt = (js.extra.get("_run"), js.last_start)
            if attempt != lg.attempt:
                lg.attempt = attempt
                lg.restart(js.last_start, max(0.0, js.work_done - js.speed * (now - js.last_start)))
            t0 = lg.last_t if lg.last_t is not None else js.last_start
        else:  # never seen running (shorter than one monitoring interval): one attempt of runtime_s
            w1, ended_by = job.duration_s, "trace"
            t0 = now - runtime_s
            lg.restart(t0, 0.0)
        if w1 > lg.last_w:
            lg.advance(t0, lg.last_w, now, w1, 1.0)
        lg.end(now, ended_by)


class SemanticLogAnnotator(Annotator):
    """Wraps an annotator: writes the augmented jobs' logs while they run, then lets the inner annotator
    look (its `on_running` is called at this wrapper's interval, after the logs are written)."""

    name = "semantic-logs"

    def __init__(self, inner: Annotator, monitor_interval_s: float | None = None) -> None:
        self.inner = inner
        self.monitor_interval_s = monitor_interval_s or inner.monitor_interval_s or 300.0
        self.writer = LogWriter()

    def on_submit(self, job: Job, now: float) -> Annotation:
        return self.inner.on_submit(job, now)

    def monitor_delay(self, js: JobState, run_s: float) -> float:
        if type(self.inner).monitor_delay is Annotator.monitor_delay:
            return self.monitor_interval_s
        return min(self.monitor_interval_s, self.inner.monitor_delay(js, run_s))

    def on_running(self, sim: SchedulerView, js: JobState, now: float) -> Annotation | None:
        self.writer.update(js, now)
        return self.inner.on_running(sim, js, now)

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        self.writer.finish(job, now, runtime_s)
        self.inner.on_finish(job, now, runtime_s)

    def reset(self, seed: int) -> None:
        self.writer.reset()
        self.inner.reset(seed)


__all__ = ["EPOCH0", "STYLES", "JobLog", "LogWriter", "SemanticLogAnnotator", "failure_tail"]
