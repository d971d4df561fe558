"""The HTTP API (FastAPI; OpenAPI at `/docs`).

    POST /v1/jobs                 submit scope   a job's context -> its annotation (201)
    POST /v1/jobs/{id}/log        submit scope   a log chunk (text body) -> the refreshed annotation
    POST /v1/jobs/{id}/finish     submit scope   how it ended -> feeds the history store
    POST /v1/slurm/submit         submit scope   a Slurm job from job_submit.lua -> settings (adapters/slurm_live)
    GET  /v1/jobs/{id}            read scope     the latest annotation (404 if unknown)
    GET  /v1/jobs?state=S         read scope     the jobs, optionally in one state
    GET  /healthz, /readyz, /metrics             no token

Bearer tokens per client with scopes (`schedmate token create`), stored as sha256 digests: no token 401,
wrong scope 403. Bodies over `max_body_bytes` get 413, clients over `rate_per_s` get 429, a database that
refuses writes gives 503 with its message. Every accepted request is stored before the answer is sent.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import ValidationError

from schedmate.service.annotate import AnnotationEngine, FinishRequest, JobRequest, Metrics, Refused
from schedmate.service.db import DuplicateJob, Store, StoreUnavailable

SCOPES = ("submit", "read", "admin")
log = logging.getLogger("schedmate.service")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(store: Store, name: str, scopes: list[str]) -> str:
    bad = sorted(set(scopes) - set(SCOPES))
    if bad or not scopes:
        raise ValueError(f"scopes must be among {', '.join(SCOPES)} (got {', '.join(scopes) or 'none'})")
    token = "smt_" + secrets.token_urlsafe(32)
    store.add_client(name, hash_token(token), scopes)
    return token


@dataclass
class Settings:
    db: str = "schedmate-service.sqlite"
    roots: list[Path] = field(default_factory=list)
    use_llm: bool = False
    max_body_bytes: int = 1 << 20
    max_log_bytes: int = 64 << 20
    rate_per_s: float = 200.0
    burst: float = 400.0
    queue_size: int = 64


class RateLimiter:
    """A token bucket per client."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self._state: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, client: str) -> bool:
        now = time.monotonic()
        with self._lock:
            tokens, last = self._state.get(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self._state[client] = (tokens, now)
                return False
            self._state[client] = (tokens - 1, now)
            return True


def create_app(settings: Settings) -> FastAPI:
    store = Store(settings.db)
    metrics = Metrics()
    engine = AnnotationEngine(settings.roots, use_llm=settings.use_llm, queue_size=settings.queue_size,
                              metrics=metrics)
    limiter = RateLimiter(settings.rate_per_s, settings.burst)
    app = FastAPI(title="schedmate annotation service", version="1",
                  description="Semantic annotations of GPU jobs at submission and while they run.")
    app.state.store, app.state.engine, app.state.metrics = store, engine, metrics

    # history store rebuilt from the database (the chromadb/vector side is derived data)
    for rec in store.finished_requests():
        try:
            engine.finish(JobRequest.model_validate(rec["request"]), FinishRequest.model_validate(rec["finish"]))
        except (ValidationError, Refused, ValueError):
            metrics.inc("history_rebuild_skipped")

    @app.middleware("http")
    async def _limits(request: Request, call_next: Any) -> Any:
        t0 = time.perf_counter()
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > settings.max_body_bytes):
            metrics.inc("http_413")
            return JSONResponse({"detail": f"body over {settings.max_body_bytes} bytes"}, status_code=413)
        try:
            response = await call_next(request)
        except StoreUnavailable as e:
            metrics.inc("http_503")
            return JSONResponse({"detail": f"database unavailable: {e}"}, status_code=503)
        metrics.inc(f"http_{response.status_code}")
        metrics.observe("request", time.perf_counter() - t0)
        return response

    @app.exception_handler(StoreUnavailable)
    async def _unavailable(_: Request, e: StoreUnavailable) -> JSONResponse:
        metrics.inc("http_503")
        return JSONResponse({"detail": f"database unavailable: {e}"}, status_code=503)

    def client(scope: str) -> Any:
        def check(request: Request) -> str:
            auth = request.headers.get("authorization", "")
            if not auth.lower().startswith("bearer "):
                raise HTTPException(401, "a bearer token is required (schedmate token create)",
                                    headers={"WWW-Authenticate": "Bearer"})
            found = store.client_by_token(hash_token(auth[7:].strip()))
            if found is None:
                raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
            name, scopes = found
            if scope not in scopes and "admin" not in scopes:
                raise HTTPException(403, f"this token lacks the {scope!r} scope")
            if not limiter.allow(name):
                metrics.inc("http_429")
                raise HTTPException(429, "rate limit: slow down", headers={"Retry-After": "1"})
            return name
        return check

    # FastAPI reads these at runtime: plain defaults, not annotations (postponed annotations are strings)
    submitter = Depends(client("submit"))
    reader = Depends(client("read"))

    def accept(req: JobRequest, who: str) -> dict[str, Any]:
        """Annotate, store and queue the refinement of a new job; raises Refused or DuplicateJob."""
        body = engine.submit(req)
        store.add_job(req.id, who, req.model_dump(mode="json"), body, body["source"])
        metrics.inc("jobs_submitted")

        def refined(result: dict[str, Any] | None, error: str | None = None) -> None:
            if result is not None:
                try:
                    store.add_annotation(req.id, result, result["source"])
                except StoreUnavailable:
                    metrics.inc("llm_answers_lost_to_db")
            else:
                log.warning("LLM refinement of %s failed: %s", req.id, error)

        body["refinement"] = engine.enqueue_refinement(req, refined)
        return {"id": req.id, **body}

    @app.post("/v1/jobs", status_code=201)
    def submit(req: JobRequest, who: str = submitter) -> dict[str, Any]:
        try:
            return accept(req, who)
        except Refused as e:
            raise HTTPException(400, str(e)) from None
        except DuplicateJob as e:
            raise HTTPException(409, str(e)) from None

    from adapters.slurm_live.routes import add_routes  # POST /v1/slurm/submit, for job_submit.lua

    add_routes(app, accept, submitter, engine.roots)

    @app.post("/v1/jobs/{job_id}/log")
    async def add_log(job_id: str, request: Request, who: str = submitter) -> dict[str, Any]:
        job = store.job(job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id!r}")
        raw = await request.body()
        text = raw.decode("utf-8", errors="replace")
        if job["log_bytes"] + len(raw) > settings.max_log_bytes:
            raise HTTPException(413, f"job {job_id!r} log over {settings.max_log_bytes} bytes")
        store.append_log(job_id, text)
        # an evicted monitor is rebuilt from what was stored before this chunk
        body = engine.log(job_id, text, lambda: store.log_text(job_id)[: -len(text) or None])
        state = "failed" if body["annotation"]["failure"] and body["annotation"]["failure"]["failed"] else "running"
        store.add_annotation(job_id, body, "log", state=state)
        metrics.inc("log_chunks")
        return {"id": job_id, **body}

    @app.post("/v1/jobs/{job_id}/finish")
    def finish(job_id: str, fin: FinishRequest, who: str = submitter) -> dict[str, Any]:
        job = store.job(job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id!r}")
        req = JobRequest.model_validate(job["request"])
        try:
            engine.finish(req, fin)
        except Refused:
            metrics.inc("history_skipped")
        store.add_annotation(job_id, fin.model_dump(mode="json"), "finish", state="finished")
        return {"id": job_id, "state": "finished"}

    @app.get("/v1/jobs/{job_id}")
    def get_job(job_id: str, who: str = reader) -> dict[str, Any]:
        job = store.job(job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id!r}")
        return job

    @app.get("/v1/jobs")
    def list_jobs(state: str | None = None, who: str = reader) -> dict[str, Any]:
        return {"jobs": store.jobs(state)}

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz() -> JSONResponse:
        try:
            counts = store.counts()
        except StoreUnavailable as e:
            return JSONResponse({"status": "unavailable", "detail": str(e)}, status_code=503)
        return JSONResponse({"status": "ready", **counts, "llm_queue": engine.queue_depth()})

    @app.get("/metrics", response_class=PlainTextResponse)
    def prometheus() -> str:
        lines = []
        with metrics.lock:
            for name, v in sorted(metrics.counters.items()):
                lines.append(f"schedmate_{name}_total {v}")
            for name, xs in sorted(metrics.latencies.items()):
                s = sorted(xs)
                for q in (0.5, 0.99):
                    if s:
                        lines.append(f'schedmate_{name}_seconds{{quantile="{q}"}} {s[min(len(s) - 1, int(q * len(s)))]:.6f}')
                lines.append(f"schedmate_{name}_seconds_count {len(s)}")
        lines.append(f"schedmate_llm_queue_depth {engine.queue_depth()}")
        return "\n".join(lines) + "\n"

    return app
