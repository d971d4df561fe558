"""What the service computes: an annotation at submission, refreshed from the job's log, refined by the LLM.

At submission the static and rule paths answer at once (`source: static`): the code analyzer's static pass
and the history predictor (`SemanticAnnotator(use_llm=False)`). When a model is configured, the job then
goes into a bounded queue; one worker asks the LLM-backed annotator and stores its answer as a newer
annotation (`source: llm`). A full queue or a dead model leaves the static answer standing, with the
reason counted in the metrics; nothing waits on the model.

Job text is untrusted: the code analyzer never executes it, the log monitor treats lines as data (rules
first; lines addressed to a model are withheld from it).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from schedmate.records import Annotation, Job, Outcome, SemanticRefs

MAX_COMMAND_CHARS = 8_000
MAX_MONITORS = 2_000
"""log monitors kept in memory; an evicted one is rebuilt from the stored log on the next chunk"""


class JobRequest(BaseModel):
    """`POST /v1/jobs`: a job's context at submission."""

    id: str = Field(min_length=1, max_length=256, pattern=r"^[\w.:@/+-]+$")
    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS)
    workdir: str | None = Field(default=None, max_length=4096)
    user: str | None = Field(default=None, max_length=128)
    num_gpus: int = Field(default=0, ge=0, le=100_000)
    submit_time: float | None = Field(default=None, ge=0)
    requested_time_s: float | None = Field(default=None, gt=0, le=10 * 365 * 86400)

    @field_validator("command")
    @classmethod
    def _no_nul(cls, v: str) -> str:
        if "\x00" in v:
            raise ValueError("command contains a NUL byte")
        return v


class FinishRequest(BaseModel):
    """`POST /v1/jobs/{id}/finish`: how the job ended (feeds the history store)."""

    runtime_s: float = Field(gt=0, le=10 * 365 * 86400)
    outcome: Outcome = Outcome.completed


class Refused(ValueError):
    """A request the service will not act on (e.g. a workdir outside the allowed roots)."""


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


@dataclass
class Metrics:
    counters: dict[str, int] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def inc(self, name: str, by: int = 1) -> None:
        with self.lock:
            self.counters[name] = self.counters.get(name, 0) + by

    def observe(self, name: str, seconds: float) -> None:
        with self.lock:
            xs = self.latencies.setdefault(name, [])
            xs.append(seconds)
            if len(xs) > 20_000:
                del xs[: len(xs) // 2]


class AnnotationEngine:
    def __init__(self, roots: list[Path] | None = None, use_llm: bool = False, queue_size: int = 64,
                 metrics: Metrics | None = None) -> None:
        from schedmate.annotators.semantic import SemanticAnnotator

        self.roots = [Path(r).resolve() for r in (roots or [])]
        self.metrics = metrics or Metrics()
        self._static = SemanticAnnotator(use_llm=False)
        self._static.reset(0)
        self._static_lock = threading.Lock()
        self._monitors: OrderedDict[str, Any] = OrderedDict()
        self._mon_lock = threading.Lock()
        self.use_llm = use_llm
        self._queue: queue.Queue[tuple[JobRequest, Any]] = queue.Queue(maxsize=queue_size)
        self._llm: Any = None
        self._worker: threading.Thread | None = None
        if use_llm:
            self._llm = SemanticAnnotator(use_llm=True)
            self._llm.reset(0)
            self._worker = threading.Thread(target=self._refine_loop, name="schedmate-llm", daemon=True)
            self._worker.start()

    # ------------------------------------------------------------------ submission
    def job_of(self, req: JobRequest) -> Job:
        refs = None
        if req.workdir is not None:
            wd = Path(req.workdir).resolve()
            if not self.roots:
                raise Refused("this service reads no workdirs (start it with --root DIR to allow some)")
            if not _inside(wd, self.roots):
                raise Refused(f"workdir {req.workdir} is outside the allowed roots "
                              f"({', '.join(str(r) for r in self.roots)})")
            if not wd.is_dir():
                raise Refused(f"workdir {req.workdir} is not a readable directory")
            refs = SemanticRefs(workdir=str(wd), command=req.command)
        return Job(id=req.id, user=req.user, submit_time=req.submit_time or 0.0, num_gpus=req.num_gpus,
                   duration_s=0.0, requested_time_s=req.requested_time_s, semantic=refs)

    def submit(self, req: JobRequest) -> dict[str, Any]:
        """The static answer, at once; queues the LLM refinement when a model is configured."""
        job = self.job_of(req)
        t0 = time.perf_counter()
        with self._static_lock:
            ann = self._static.on_submit(job, req.submit_time or time.time())
            prof = self._static._profiles.get(job.id)
            self._static._profiles.pop(job.id, None)  # keep memory flat in a long-running service
        self.metrics.observe("annotate_static", time.perf_counter() - t0)
        return self._body(ann, prof, "static")

    def enqueue_refinement(self, req: JobRequest, on_done: Any) -> str:
        """'queued', or why not ('no model configured', 'queue full')."""
        if not self.use_llm:
            return "no model configured"
        try:
            self._queue.put_nowait((req, on_done))
        except queue.Full:
            self.metrics.inc("llm_queue_full")
            return "queue full: the static answer stands"
        return "queued"

    def queue_depth(self) -> int:
        return self._queue.qsize()

    def _refine_loop(self) -> None:
        while True:
            req, on_done = self._queue.get()
            t0 = time.perf_counter()
            try:
                job = self.job_of(req)
                ann = self._llm.on_submit(job, req.submit_time or time.time())
                prof = self._llm._profiles.pop(job.id, None)
                calls = prof.llm_calls if prof is not None else 0
                self.metrics.inc("llm_calls", calls)
                on_done(self._body(ann, prof, "llm" if calls else "static"))
            except Exception as e:  # noqa: BLE001 - a dead model or a bad answer leaves the static answer
                self.metrics.inc("llm_failures")
                on_done(None, error=f"{type(e).__name__}: {e}")
            finally:
                self.metrics.observe("annotate_llm", time.perf_counter() - t0)

    @staticmethod
    def _body(ann: Annotation, prof: Any, source: str) -> dict[str, Any]:
        out: dict[str, Any] = {"annotation": ann.model_dump(mode="json"), "source": source}
        if prof is not None:
            contract = prof.to_contract()
            out["code_profile"] = {k: v for k, v in contract.items() if k not in {"derived", "evidence"}}
            out["llm_calls"] = prof.llm_calls
        return out

    # ------------------------------------------------------------------ logs
    def log(self, job_id: str, chunk: str, stored_text: Any) -> dict[str, Any]:
        """Feed a chunk to the job's log monitor (rebuilt from `stored_text()` if evicted); the refreshed
        progress, remaining time and failure signal."""
        from schedmate.logmon.cli import make_monitor
        from schedmate.logmon.report import to_annotation

        with self._mon_lock:
            mon = self._monitors.pop(job_id, None)
            if mon is None:
                mon = make_monitor(job_id, use_llm=False)
                earlier = stored_text()
                if earlier:
                    mon.feed(earlier)
            mon.feed(chunk)
            mon.flush()  # a posted chunk is complete: decide on what it holds now
            self._monitors[job_id] = mon
            while len(self._monitors) > MAX_MONITORS:
                self._monitors.popitem(last=False)
            report = mon.report()
        ann = to_annotation(report, job_id, made_at=time.time())
        return {"annotation": ann.model_dump(mode="json"), "source": "log",
                "progress": report.progress.model_dump(mode="json"), "finished": report.finished,
                "warnings": report.warnings}

    def finish(self, req: JobRequest, fin: FinishRequest) -> None:
        # the workdir may be gone by now: the history keeps the job's metadata and runtime either way
        refs = SemanticRefs(workdir=req.workdir, command=req.command) if req.workdir else None
        job = Job(id=req.id, user=req.user, submit_time=req.submit_time or 0.0, num_gpus=req.num_gpus,
                  duration_s=fin.runtime_s, outcome=fin.outcome, requested_time_s=req.requested_time_s,
                  semantic=refs)
        with self._static_lock:
            self._static.on_finish(job, (req.submit_time or 0.0) + fin.runtime_s, fin.runtime_s)
        if self._llm is not None:
            self._llm.on_finish(job, (req.submit_time or 0.0) + fin.runtime_s, fin.runtime_s)
        with self._mon_lock:
            self._monitors.pop(job.id, None)
