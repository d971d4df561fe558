"""`schedmate watch slurm`: follow running jobs' logs into the annotation service and act on the answers.

Every `interval_s`: `squeue --json`; for each job the submission plugin registered (AdminComment
`schedmate:id=...`): post the new whole lines of its StdOut file to `POST /v1/jobs/{id}/log`, judge the
answer (`rules.judge`), and carry the verdict out through the Slurm adapter (`adapters/slurm.py`): an
extension is `scontrol update TimeLimit=`, a failure or hang is `scontrol requeue` or `scancel` (with
the summary written to the Comment). When a job ends, its last lines and `POST /v1/jobs/{id}/finish`
(runtime, outcome) feed the service's history, so the next prediction learns from it.

Restarts: offsets and memories are kept in a state file (written atomically after every look); a job
the state file does not know starts at the log size the service already holds. With `apply=False`
(dry run) the logs still go to the service; only the Slurm commands are printed instead of run.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from adapters.base import ActionKind, AdapterError, Decision, JobPhase, Plan, read_command
from adapters.slurm import JOB_ID, SlurmAdapter, SlurmConfig
from adapters.slurm_live.follow import (
    CHUNK_BYTES,
    WatchJob,
    complete_lines,
    output_path,
    parse_watch_jobs,
    read_new,
)
from adapters.slurm_live.rules import JobMemory, Verdict, WatchConfig, judge
from schedmate.records import Annotation, Outcome, Provenance

STATE_VERSION = 1
MAX_CHUNKS_PER_LOOK = 8
_OUTCOMES = {"COMPLETED": Outcome.completed, "CANCELLED": Outcome.cancelled, "TIMEOUT": Outcome.timeout,
             "DEADLINE": Outcome.timeout, "PREEMPTED": Outcome.cancelled}

Emit = Callable[..., None]
"""emit(event, job="-", **fields): one structured log record."""


class ServiceError(RuntimeError):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ServiceClient:
    """The few calls the watcher makes, with the token of a client holding the submit scope."""

    def __init__(self, url: str, token: str, timeout_s: float = 10.0) -> None:
        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout_s,
                                 headers={"Authorization": f"Bearer {token}"})

    def _call(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        try:
            r = self.http.request(method, path, **kw)
        except httpx.HTTPError as e:
            raise ServiceError(f"{method} {path}: {type(e).__name__}: {e}") from None
        if r.status_code >= 300:
            raise ServiceError(f"{method} {path}: HTTP {r.status_code}: {r.text[:300]}", r.status_code)
        try:
            return r.json()
        except ValueError:
            raise ServiceError(f"{method} {path}: not JSON: {r.text[:100]!r}") from None

    def job(self, sid: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/jobs/{sid}")

    def submit(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/v1/jobs", json=request)

    def log(self, sid: str, chunk: bytes) -> dict[str, Any]:
        return self._call("POST", f"/v1/jobs/{sid}/log", content=chunk,
                          headers={"Content-Type": "text/plain; charset=utf-8"})

    def finish(self, sid: str, runtime_s: float, outcome: Outcome) -> dict[str, Any]:
        return self._call("POST", f"/v1/jobs/{sid}/finish", json={"runtime_s": runtime_s, "outcome": outcome.value})


def load_state(path: Path) -> dict[str, JobMemory]:
    """The memories of an earlier run; AdapterError naming the file when it is not ours (never overwritten)."""
    if not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text())
        if doc.get("version") != STATE_VERSION:
            raise ValueError(f"version {doc.get('version')!r}, expected {STATE_VERSION}")
        return {jid: JobMemory.model_validate(m) for jid, m in doc["jobs"].items() if JOB_ID.fullmatch(jid)}
    except (OSError, ValueError, KeyError, AttributeError, ValidationError) as e:
        raise AdapterError(f"{path}: not a watcher state file ({str(e).splitlines()[0]}); "
                           "move it away to start afresh (logs already posted would then be posted again "
                           "only for jobs the service holds no log of)") from None


def save_state(path: Path, jobs: dict[str, JobMemory]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"version": STATE_VERSION, "jobs": {k: m.model_dump() for k, m in jobs.items()}}))
    os.replace(tmp, path)


class Watcher:
    def __init__(self, client: ServiceClient, cfg: WatchConfig, state_file: Path, apply: bool, emit: Emit,
                 slurm: SlurmConfig | None = None) -> None:
        self.client, self.cfg, self.state_file, self.apply, self.emit = client, cfg, state_file, apply, emit
        self.slurm = slurm or SlurmConfig(min_confidence=cfg.min_confidence)
        self.jobs = load_state(state_file)

    # ------------------------------------------------------------------ one look
    def tick(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        try:
            seen = parse_watch_jobs(read_command([self.slurm.squeue, "--json"]), now)
        except (AdapterError, ValueError, KeyError) as e:
            self.emit("squeue_failed", error=str(e))
            return
        for jid, job in seen.items():
            if job.service_id is None:
                continue
            phase = job.view.phase
            mem = self.jobs.get(jid)
            if phase is JobPhase.running or (phase is JobPhase.finished and not (mem and mem.finished)):
                try:
                    self._look(jid, job, now)
                except ServiceError as e:
                    self.emit("service_error", jid, error=str(e))
        for jid in [j for j in self.jobs if j not in seen]:
            mem = self.jobs.pop(jid)
            if not mem.finished:
                self.emit("lost", jid, reason="left squeue before its end was seen; not finished in the service")
        save_state(self.state_file, self.jobs)

    def _memory(self, jid: str, job: WatchJob) -> JobMemory:
        mem = self.jobs.get(jid)
        if mem is not None and mem.attempt != job.restarts:
            self.emit("restarted", jid, attempt=job.restarts)
            mem = self.jobs[jid] = mem.new_attempt(job.restarts)
        if mem is None:
            sid = job.service_id or ""
            if job.array_task_id is not None:
                sid = self._task_record(sid, job.array_task_id)
            try:
                known = self.client.job(sid)
            except ServiceError as e:
                if e.status != 404:
                    raise
                mem = self.jobs[jid] = JobMemory(service_id=sid, stopped=f"unknown to the service: {e}")
                self.emit("not_followed", jid, reason=mem.stopped)
                return mem
            cap = (known.get("request") or {}).get("requested_time_s")
            mem = JobMemory(service_id=sid, attempt=job.restarts, cap_s=cap, cap_known=True,
                            offset=int(known.get("log_bytes") or 0), finished=known.get("state") == "finished")
            self.jobs[jid] = mem
            self.emit("following", jid, service_id=sid, cap_min=None if cap is None else round(cap / 60))
        return mem

    def _task_record(self, sid: str, task: int) -> str:
        """Array tasks share their parent's AdminComment; each gets its own service record (and log)."""
        task_sid = f"{sid}_{task}"
        try:
            self.client.job(task_sid)
        except ServiceError as e:
            if e.status != 404:
                raise
            parent = self.client.job(sid)["request"]
            self.client.submit({**parent, "id": task_sid, "submit_time": time.time()})
        return task_sid

    def _look(self, jid: str, job: WatchJob, now: float) -> None:
        mem = self._memory(jid, job)
        final = job.view.phase is JobPhase.finished
        body, grew = None, False
        if mem.stopped is None:
            try:
                path = output_path(job)
                for _ in range(MAX_CHUNKS_PER_LOOK):
                    data, start = read_new(path, mem.offset, job.user_id)
                    chunk = complete_lines(data, final)
                    if not chunk:
                        break
                    body = self.client.log(mem.service_id, chunk)
                    mem.offset, grew = start + len(chunk), True
                    if len(data) < CHUNK_BYTES:
                        break
            except AdapterError as e:
                mem.stopped = str(e)
                self.emit("not_followed", jid, reason=mem.stopped)
            except ServiceError as e:
                if e.status not in (404, 413):
                    raise  # transient: the same bytes are tried again at the next look
                mem.stopped = f"the service refused the log: {e}"
                self.emit("not_followed", jid, reason=mem.stopped)
        if final:
            self._finish(jid, job, mem)
            return
        if mem.stopped is not None:
            return
        verdict = judge(mem, body if grew else None, job.view.elapsed_s, job.view.time_limit_s, now, self.cfg)
        if verdict.kind != "none":
            self._carry_out(jid, job, mem, verdict)

    def _finish(self, jid: str, job: WatchJob, mem: JobMemory) -> None:
        runtime = max(1.0, (job.end_time or 0) - (job.start_time or 0))
        outcome = _OUTCOMES.get(job.view.raw_state, Outcome.failed)
        recorded = True
        try:
            self.client.finish(mem.service_id, runtime, outcome)
        except ServiceError as e:
            if e.status != 404:
                raise  # tried again at the next look
            recorded = False
        mem.finished = True
        self.emit("finished", jid, state=job.view.raw_state, runtime_s=round(runtime), service_id=mem.service_id,
                  in_history=recorded)

    # ------------------------------------------------------------------ acting
    def _carry_out(self, jid: str, job: WatchJob, mem: JobMemory, v: Verdict) -> None:
        if v.kind == "extend":
            decision = Decision(job_id=jid, time_limit_s=v.limit_s, time_limit_basis=v.reason,
                                summary=job.view.comment or "")
            adapter = SlurmAdapter(self.slurm)
            actions, _ = adapter.render(decision, job.view)
            plan = Plan(adapter="slurm", actions=[a for a in actions if a.kind is ActionKind.time_limit])
        else:
            requeue = bool(job.requeue) and job.restarts < self.cfg.max_requeues
            adapter = SlurmAdapter(self.slurm.model_copy(update={"requeue_recoverable": requeue}))
            ann = Annotation(job_id=jid, failure=v.signal, provenance=(Provenance(component="watch"),))
            plan = adapter.plan([ann], {jid: job.view})
        said = f"{v.kind}:{' '.join(a.command() for a in plan.actions)}"
        if not self.apply and said == mem.said:
            return
        mem.said = said
        out = io.StringIO()
        results = adapter.apply(plan, dry_run=not self.apply, out=out)
        self.emit(v.kind, jid, reason=v.reason, limit_min=None if v.limit_s is None else v.limit_s // 60,
                  commands=[a.command() for a in plan.actions], applied=self.apply,
                  skipped=[s.reason for s in plan.skips], failed=[r.output for r in results if not r.ok])

    # ------------------------------------------------------------------ loop
    def run(self, once: bool = False, stop: threading.Event | None = None) -> None:
        """Look every interval until `stop` is set (between looks: a look is never cut in half)."""
        stop = stop or threading.Event()
        while True:
            started = time.monotonic()
            self.tick()
            if once or stop.wait(max(0.0, self.cfg.interval_s - (time.monotonic() - started))):
                return
