"""What the service computes: an annotation at submission, refreshed from the job's log, refined by the LLM.

At submission the static and rule paths answer at once (`source: static`): the code analyzer's static pass
and the history predictor (`SemanticAnnotator(use_llm=False)`). When a model is configured, the job then
goes into a bounded queue; one worker asks the LLM-backed annotator and stores its answer as a newer
annotation (`source: llm`). A full queue or a dead model leaves the static answer standing, with the
reason counted in the metrics; nothing waits on the model.

History: the history predictor's store is `memory` (hashed embeddings, rebuilt from the database's finished
jobs at every start) or `chroma` (MiniLM embeddings persisted at a path; rebuilt from the database when it
holds fewer records than the database has finished jobs, e.g. after it was lost).

Job text is untrusted: the code analyzer never executes it, the log monitor treats lines as data (rules
first; lines addressed to a model are withheld from it). A log chunk that is binary is refused.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from schedmate.records import Annotation, Job, Outcome, SemanticRefs
from schedmate.service.metrics import Metrics

MAX_COMMAND_CHARS = 8_000
MAX_MONITORS = 2_000
"""log monitors kept in memory; an evicted one is rebuilt from the stored log on the next chunk"""
BINARY_SNIFF = 64 << 10
"""Bytes of a log chunk looked at to tell text from binary."""


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


class LogPath(BaseModel):
    """`POST /v1/jobs/{id}/log` as JSON: a log file the service reads itself (under its roots)."""

    path: str = Field(min_length=1, max_length=4096)


class Refused(ValueError):
    """A request the service will not act on (e.g. a workdir outside the allowed roots); `status` is the
    HTTP status it gets."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def decode_log(raw: bytes) -> str:
    """A log chunk as text; `Refused(415)` for binary data (NUL bytes, or mostly not UTF-8 / not printable)."""
    head = raw[:BINARY_SNIFF]
    nul = head.count(0)
    if nul:
        raise Refused(f"log chunk is binary ({nul} NUL bytes in its first {len(head)} bytes); send text", 415)
    text = raw.decode("utf-8", errors="replace")
    sample = text[:BINARY_SNIFF]
    bad = sum(1 for ch in sample if ch == "\ufffd" or (ch < " " and ch not in "\n\r\t\x1b\x08\x0c"))
    if sample and bad > 0.1 * len(sample):
        raise Refused(f"log chunk is binary ({bad} of its first {len(sample)} characters are not text); send text",
                      415)
    return text


class AnnotationEngine:
    def __init__(self, roots: list[Path] | None = None, use_llm: bool = False, queue_size: int = 64,
                 metrics: Metrics | None = None, history: str = "memory", history_path: str | None = None) -> None:
        from schedmate.annotators.semantic import SemanticAnnotator
        from schedmate.history.store import STORES

        self.roots = [Path(r).resolve() for r in (roots or [])]
        self.metrics = metrics or Metrics()
        if history == "memory":
            self.history = STORES.create("memory", embedder="hashed")
        elif history == "chroma":
            self.history = STORES.create("chroma", path=history_path)
        else:
            raise ValueError(f"history store must be memory or chroma, got {history!r}")
        embedder = "hashed" if history == "memory" else "minilm"
        self._static = SemanticAnnotator(use_llm=False, store=self.history, embedder=embedder)
        self._static.reset(0)
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="schedmate-annotate")
        """One thread: the static annotator is not thread-safe, and a queue keeps submissions in order."""
        self._static_lock = threading.Lock()
        """Held around every use of the annotators' shared history store."""
        self._monitors: OrderedDict[str, Any] = OrderedDict()
        self._mon_lock = threading.Lock()
        self.use_llm = use_llm
        self._queue: queue.Queue[tuple[JobRequest, Any]] = queue.Queue(maxsize=queue_size)
        self._llm: Any = None
        self._worker: threading.Thread | None = None
        if use_llm:
            self._llm = SemanticAnnotator(use_llm=True, store=self.history, embedder=embedder)
            self._llm.reset(0)
            self._worker = threading.Thread(target=self._refine_loop, name="schedmate-llm", daemon=True)
            self._worker.start()

    def rebuild_history(self, finished: list[dict[str, Any]]) -> int:
        """Re-add the database's finished jobs when the history store holds fewer (fresh or lost); returns
        how many were re-added (adding a job again replaces it, so a partial store is made whole)."""
        self.history.flush()
        if self.history.count() >= len(finished):
            self.metrics.inc("history_rebuilt", 0)
            return 0
        n = 0
        for rec in finished:
            try:
                self.finish(JobRequest.model_validate(rec["request"]), FinishRequest.model_validate(rec["finish"]))
                n += 1
            except (ValueError, Refused):
                self.metrics.inc("history_rebuild_skipped")
        self.history.flush()
        self.metrics.inc("history_rebuilt", n)
        return n

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
            prof = self._static._profiles.pop(job.id, None)  # keep memory flat in a long-running service
            self._static.evidence.pop(job.id, None)
        self.metrics.observe("static", time.perf_counter() - t0)
        return self._body(ann, prof, "static")

    def enqueue_refinement(self, req: JobRequest, on_done: Any) -> str:
        """'queued', or why not: no model configured, no code for it to read (a command alone gives the
        model nothing the static pass has not used), the queue full."""
        if not self.use_llm:
            return "no model configured"
        if req.workdir is None:
            return "nothing for the model: no code to read"
        try:
            self._queue.put_nowait((req, on_done))
        except queue.Full:
            self.metrics.inc("llm_queue_full")
            return "queue full: the static answer stands"
        return "queued"

    def queue_depth(self) -> int:
        return self._queue.qsize()

    def history_count(self) -> int:
        with self._static_lock:
            self.history.flush()
            return self.history.count()

    def readable(self, path: str) -> Path:
        """A file under the roots (symlinks resolved first), or `Refused`."""
        p = Path(path).resolve()
        if not self.roots:
            raise Refused("this service reads no files (start it with --root DIR to allow some)")
        if not _inside(p, self.roots):
            raise Refused(f"{path} is outside the allowed roots ({', '.join(str(r) for r in self.roots)})")
        if not p.is_file():
            raise Refused(f"{path} is not a readable file")
        return p

    def read_log(self, path: str, offset: int, limit: int) -> tuple[str, int]:
        """What the log file at `path` gained since byte `offset` (at most `limit` bytes, cut at a line end
        when there is one) and the new offset; a file shorter than `offset` was truncated or replaced:
        it is read from its start."""
        p = self.readable(path)
        with p.open("rb") as fh:
            if fh.seek(0, 2) < offset:
                offset = 0
            fh.seek(offset)
            raw = fh.read(limit)
        if len(raw) == limit and b"\n" in raw:
            raw = raw[: raw.rindex(b"\n") + 1]
        return decode_log(raw), offset + len(raw)

    def forget_monitor(self, job_id: str) -> None:
        """Drop a job's monitor (its chunk was not stored: the next one rebuilds it from the database)."""
        with self._mon_lock:
            self._monitors.pop(job_id, None)

    def _refine_loop(self) -> None:
        """For each queued job: `on_done(body)` with the model's annotation (`source: llm`), `on_done(None,
        error=...)` when the model failed (down, slow past its client's timeout, an answer that broke the
        schema), or `on_done(None)` when the static pass left the model nothing to do."""
        while True:
            req, on_done = self._queue.get()
            t0 = time.perf_counter()
            try:
                job = self.job_of(req)
                self._llm._profile(job)  # the LLM calls, outside the lock (the profile is kept for on_submit)
                with self._static_lock:  # the history store is shared and not thread-safe
                    ann = self._llm.on_submit(job, req.submit_time or time.time())
                    self._llm.evidence.pop(job.id, None)
                prof = self._llm._profiles.pop(job.id, None)
                calls = prof.llm_calls if prof is not None else 0
                self.metrics.inc("llm_calls", calls)
                failed = [w for w in (prof.warnings if prof is not None else []) if w.startswith("LLM call failed")]
                if failed:
                    self.metrics.inc("llm_failures")
                    on_done(None, error=failed[0])
                elif calls:
                    on_done(self._body(ann, prof, "llm"))
                else:
                    self.metrics.inc("llm_nothing_to_refine")
                    on_done(None)
            except Exception as e:  # noqa: BLE001 - a dead model or a bad answer leaves the static answer
                self.metrics.inc("llm_failures")
                on_done(None, error=f"{type(e).__name__}: {e}")
            finally:
                self.metrics.observe("llm", time.perf_counter() - t0)

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
        end = (req.submit_time or time.time() - fin.runtime_s) + fin.runtime_s
        with self._static_lock:
            self._static.on_finish(job, end, fin.runtime_s)  # the shared history store gets the record
            if self._llm is not None:
                self._llm.evidence.pop(job.id, None)
        with self._mon_lock:
            self._monitors.pop(job.id, None)
