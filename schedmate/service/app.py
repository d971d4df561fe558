"""The HTTP API (FastAPI under uvicorn; OpenAPI at `/docs`).

    POST   /v1/jobs                  submit  a job's context (JSON) -> its annotation (201)
    POST   /v1/jobs/upload           submit  the same as multipart: `job` (JSON) + `code` (a tarball) (201)
    POST   /v1/jobs/{id}/log         submit  a log chunk (text body), or {"path": ...} of a log under the roots
                                             that the service reads from where it stopped -> refreshed annotation
    POST   /v1/jobs/{id}/finish      submit  how it ended -> feeds the history store
    GET    /v1/jobs/{id}             read    the latest annotation (404 if unknown)
(an id may hold slashes, e.g. a Kubernetes `namespace/name`)
    GET    /v1/jobs?state=S          read    the jobs, optionally in one state (paged with limit/after)
    POST   /v1/admission/kubernetes  submit  a Kubernetes AdmissionReview v1 -> JSONPatch (fails open)
    POST   /v1/slurm/submit          submit  a Slurm job from job_submit.lua -> settings (adapters/slurm_live)
    GET/POST/DELETE /v1/clients      admin   client tokens
    GET    /healthz, /readyz, /metrics       no token

Statuses: 400 malformed JSON or a refused request (workdir outside the roots, unsafe tarball), 401 no or
unknown token, 403 wrong scope, 404 unknown job, 408 body too slow, 409 duplicate id, 413 body/log/archive
over its limit, 415 a binary log or a non-tar upload, 422 fields that fail validation, 429 over the
client's rate, 503 the database refused (its message) or the annotation took over `annotate_timeout_s`.
Every accepted request is committed before its answer is sent (`db.py`: group commit).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from adapters.kubernetes import KubernetesConfig
from schedmate.service.annotate import (
    AnnotationEngine,
    FinishRequest,
    JobRequest,
    LogPath,
    Refused,
    decode_log,
)
from schedmate.service.auth import (
    SCOPES,
    Authenticator,
    AuthMiddleware,
    RateLimiter,
    create_token,
    hash_token,
    parse_scopes,
    required_scope,
)
from schedmate.service.db import STATES, Store, StoreUnavailable
from schedmate.service.guard import Guard
from schedmate.service.metrics import Metrics, event
from schedmate.service.uploads import UploadRefused, unpack

__all__ = ["SCOPES", "Settings", "create_app", "create_token", "hash_token"]
log = logging.getLogger("schedmate.service")
JOB_PART = Form(description="The job's fields as JSON (no workdir).")
CODE_PART = File(description="tar, tar.gz, tar.bz2 or tar.xz of the job's code.")


@dataclass
class Settings:
    db: str = "schedmate-service.sqlite"
    roots: list[Path] = field(default_factory=list)
    use_llm: bool = False
    durability: str = "full"
    """SQLite: `full` fsyncs every group commit (survives a power cut); `normal` survives kill -9 only."""
    max_body_bytes: int = 1 << 20
    max_upload_bytes: int = 16 << 20
    """Compressed size of an uploaded tarball (the whole multipart body)."""
    max_unpacked_bytes: int = 64 << 20
    max_upload_members: int = 10_000
    uploads_dir: Path | None = None
    """Where uploaded code is unpacked (default: `uploads/` beside a SQLite database, else ~/.schedmate)."""
    max_log_bytes: int = 64 << 20
    """Per job, everything its log chunks add up to."""
    max_log_read_bytes: int = 4 << 20
    """Read from a log path per request."""
    rate_per_s: float = 200.0
    burst: float = 400.0
    queue_size: int = 64
    annotate_timeout_s: float = 30.0
    body_timeout_s: float = 30.0
    history: str = "memory"
    history_path: str | None = None
    admission_token: bool = True
    """The admission webhook needs a submit token like any client; False for clusters whose API server
    cannot send one (then TLS and a NetworkPolicy are the gate; see adapters/kubernetes/deploy/)."""
    kubernetes: KubernetesConfig = field(default_factory=KubernetesConfig)

    def uploads(self) -> Path:
        if self.uploads_dir is not None:
            return Path(self.uploads_dir)
        if "://" not in self.db:
            return Path(self.db).expanduser().resolve().parent / "uploads"
        from schedmate.history.store import schedmate_home

        return schedmate_home() / "service-uploads"


KEPT_FROM_SUBMISSION = ("predicted_duration", "network_sensitivity", "spread_slowdown")


def keep_submission_fields(fresh: dict[str, Any], prior: Any) -> dict[str, Any]:
    """A log-refreshed annotation keeps what the log cannot tell (the code's network sensitivity, the
    predicted duration) from the job's previous annotation; the log decides progress and failure."""
    if not isinstance(prior, dict):
        return fresh
    out = dict(fresh)
    for key in KEPT_FROM_SUBMISSION:
        if out.get(key) is None and prior.get(key) is not None:
            out[key] = prior[key]
    seen = {p.get("component") for p in out.get("provenance") or []}
    out["provenance"] = [p for p in prior.get("provenance") or [] if p.get("component") not in seen] + list(
        out.get("provenance") or [])
    return out


def create_app(settings: Settings) -> FastAPI:
    store = Store(settings.db, durability=settings.durability)
    metrics = Metrics()
    uploads = settings.uploads()
    uploads.mkdir(parents=True, exist_ok=True)
    engine = AnnotationEngine([*settings.roots, uploads], use_llm=settings.use_llm, queue_size=settings.queue_size,
                              metrics=metrics, history=settings.history, history_path=settings.history_path)
    engine.rebuild_history(store.finished_requests())
    auth = Authenticator(store, RateLimiter(settings.rate_per_s, settings.burst))
    metrics.bind(engine.queue_depth, lambda: store.batches, lambda: store.batched_writes)
    job_locks: dict[str, list[Any]] = {}  # job id -> [its lock, requests holding or waiting for it]

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        store.close()  # drains the writer: what was queued is committed

    extra: dict[str, Any] = {}
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters:
        # FastAPI's own OpenTelemetry hooks look the providers up on every request (a fifth of the event
        # loop's time under load); the service has its own metrics at /metrics.
        extra["telemetry"] = {"tracing": False, "metrics": False, "logs": False}
    app = FastAPI(title="schedmate annotation service", version="1", lifespan=lifespan,
                  description="Semantic annotations of GPU jobs at submission and while they run.", **extra)
    app.state.store, app.state.engine, app.state.metrics, app.state.settings = store, engine, metrics, settings

    def limit_for(path: str) -> int:
        if path == "/v1/jobs/upload":
            return settings.max_upload_bytes
        if path.endswith("/log"):
            return max(settings.max_body_bytes, settings.max_log_read_bytes)
        return settings.max_body_bytes

    app.add_middleware(AuthMiddleware, authenticator=auth,
                       required=lambda method, path: required_scope(method, path, settings.admission_token))
    app.add_middleware(Guard, metrics=metrics, limit_for=limit_for, body_timeout_s=settings.body_timeout_s)  # outermost

    @app.exception_handler(StoreUnavailable)
    async def _unavailable(_: Request, e: StoreUnavailable) -> JSONResponse:
        metrics.inc("db_unavailable")
        event(log, logging.ERROR, "database unavailable", reason=str(e))
        return JSONResponse({"detail": f"database unavailable: {e}"}, status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        errors = e.errors()
        bad_json = [x for x in errors if x.get("type") == "json_invalid"]
        if bad_json:
            ctx = bad_json[0].get("ctx") or {}
            return JSONResponse({"detail": f"malformed JSON: {ctx.get('error', 'decode error')} "
                                           f"at position {bad_json[0]['loc'][-1]}"}, status_code=400)
        return JSONResponse({"detail": [{k: x.get(k) for k in ("loc", "msg", "type")} for x in errors]},
                            status_code=422)

    def who(request: Request) -> str:
        return str(request.state.client)  # set by AuthMiddleware

    async def annotate(req: JobRequest) -> dict[str, Any]:
        fut = asyncio.wrap_future(engine.pool.submit(engine.submit, req))
        try:
            return await asyncio.wait_for(fut, settings.annotate_timeout_s)
        except Refused as e:
            raise HTTPException(e.status, str(e)) from None
        except TimeoutError:
            metrics.inc("annotate_timeout")
            raise HTTPException(503, f"the annotation took over {settings.annotate_timeout_s:.0f} s; nothing was "
                                     "stored, retry later", headers={"Retry-After": "10"}) from None

    async def accept(req: JobRequest, who: str) -> dict[str, Any]:
        body = await annotate(req)
        stored = await asyncio.wrap_future(store.submit(store.op_add_job(
            req.id, who, req.model_dump(mode="json"), body, body["source"])))
        if not stored:
            raise HTTPException(409, f"job {req.id!r} was submitted already")
        metrics.inc("jobs_submitted")

        def refined(result: dict[str, Any] | None, error: str | None = None) -> None:
            if result is None and error is None:
                return  # the model had nothing to add: the static answer is the answer
            if result is None:  # the static answer stands, and says why it was not refined
                event(log, logging.WARNING, "LLM refinement failed: the static answer stands", job=req.id, error=error)
                result = {**body, "refinement": f"failed: {error}"}
            fut = store.submit(store.op_add_annotation(req.id, result, result["source"]))
            fut.add_done_callback(lambda f: f.exception() and metrics.inc("llm_answers_lost_to_db"))

        body["refinement"] = engine.enqueue_refinement(req, refined)
        return {"id": req.id, **body}

    @app.post("/v1/jobs", status_code=201)
    async def submit(req: JobRequest, request: Request) -> JSONResponse:
        # plain JSON already: a JSONResponse skips FastAPI's jsonable_encoder walk of the whole body
        return JSONResponse(await accept(req, who(request)), status_code=201)

    from adapters.slurm_live.routes import add_routes  # POST /v1/slurm/submit, for job_submit.lua

    add_routes(app, accept, who, list(settings.roots))

    @app.post("/v1/jobs/upload", status_code=201)
    async def submit_upload(request: Request, job: str = JOB_PART, code: UploadFile = CODE_PART) -> dict[str, Any]:
        try:
            fields = json.loads(job)
        except json.JSONDecodeError as e:
            raise HTTPException(400, f"malformed JSON in the job part: {e}") from None
        if isinstance(fields, dict) and fields.get("workdir") is not None:
            raise HTTPException(422, "an upload carries its code: leave workdir out")
        try:
            req = JobRequest.model_validate(fields)
        except ValidationError as e:
            raise HTTPException(422, json.loads(e.json(include_url=False, include_input=False))) from None
        data = await code.read()
        try:
            dest = await run_in_threadpool(unpack, data, uploads, req.id, settings.max_upload_members,
                                           settings.max_unpacked_bytes)
        except UploadRefused as e:
            metrics.inc("upload_refused")
            raise HTTPException(e.status, f"upload refused: {e}") from None
        try:
            return await accept(req.model_copy(update={"workdir": str(dest)}), who(request))
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise

    async def job_or_404(job_id: str) -> dict[str, Any]:
        job = await run_in_threadpool(store.job, job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id!r}")
        return job

    @app.post("/v1/jobs/{job_id:path}/log", openapi_extra={"requestBody": {"content": {
        "text/plain": {"schema": {"type": "string"}},
        "application/json": {"schema": LogPath.model_json_schema()}}}})
    async def add_log(job_id: str, request: Request) -> JSONResponse:
        entry = job_locks.setdefault(job_id, [asyncio.Lock(), 0])
        entry[1] += 1
        try:
            async with entry[0]:  # a job's chunks are read, fed and stored in order
                return await _add_log(job_id, request)
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                job_locks.pop(job_id, None)

    async def _add_log(job_id: str, request: Request) -> JSONResponse:
        job = await job_or_404(job_id)
        raw = await request.body()
        offset = None
        try:
            if request.headers.get("content-type", "").split(";")[0].strip() == "application/json":
                try:
                    where = LogPath.model_validate_json(raw)
                except ValidationError as e:
                    raise HTTPException(422, f"expected {{\"path\": ...}}: {e.errors()[0]['msg']}") from None
                start = job["log_offset"] if job["log_path"] in (None, where.path) else 0
                text, offset = await run_in_threadpool(engine.read_log, where.path, start,
                                                       settings.max_log_read_bytes)
                log_path = where.path
            else:
                text, log_path = decode_log(raw), None
        except Refused as e:
            raise HTTPException(e.status, str(e)) from None
        if job["log_bytes"] + len(text.encode()) > settings.max_log_bytes:
            raise HTTPException(413, f"job {job_id!r} log over {settings.max_log_bytes} bytes")
        body = await asyncio.wrap_future(engine.pool.submit(engine.log, job_id, text, lambda: store.log_text(job_id)))
        body["annotation"] = keep_submission_fields(body["annotation"], (job["annotation"] or {}).get("annotation"))
        failure = body["annotation"]["failure"]
        state = "failed" if failure and failure["failed"] else "running"
        try:
            await asyncio.wrap_future(store.submit(store.op_add_annotation(
                job_id, body, "log", state=state, log=text, log_offset=offset, log_path=log_path)))
        except StoreUnavailable:
            engine.forget_monitor(job_id)  # it saw a chunk the database does not have
            raise
        metrics.inc("log_chunks")
        return JSONResponse({"id": job_id, **body})

    @app.post("/v1/jobs/{job_id:path}/finish")
    async def finish(job_id: str, fin: FinishRequest) -> dict[str, Any]:
        job = await job_or_404(job_id)
        if job["state"] == "finished":
            raise HTTPException(409, f"job {job_id!r} finished already")
        req = JobRequest.model_validate(job["request"])
        try:
            await asyncio.wrap_future(engine.pool.submit(engine.finish, req, fin))
        except Refused:
            metrics.inc("history_skipped")
        await asyncio.wrap_future(store.submit(store.op_add_annotation(
            job_id, fin.model_dump(mode="json"), "finish", state="finished")))
        if req.workdir and Path(req.workdir).parent == uploads.resolve():
            shutil.rmtree(req.workdir, ignore_errors=True)  # uploaded code is kept while the job lives
        return {"id": job_id, "state": "finished"}

    @app.get("/v1/jobs/{job_id:path}")
    async def get_job(job_id: str) -> dict[str, Any]:
        return await job_or_404(job_id)

    @app.get("/v1/jobs")
    async def list_jobs(state: str | None = None, limit: int = 1000, after: str | None = None) -> dict[str, Any]:
        if state is not None and state not in STATES:
            raise HTTPException(422, f"state must be one of {', '.join(STATES)}")
        if not 1 <= limit <= 10_000:
            raise HTTPException(422, "limit must be between 1 and 10000")
        return {"jobs": await run_in_threadpool(store.jobs, state, limit, after)}

    from schedmate.service.admission import add_admission_route

    add_admission_route(app, settings, store, engine, metrics, accept_annotation=annotate)

    @app.get("/v1/clients")
    async def list_clients() -> dict[str, Any]:
        return {"clients": await run_in_threadpool(store.clients)}

    @app.post("/v1/clients", status_code=201)
    async def add_client(spec: dict[str, str]) -> dict[str, Any]:
        try:
            scopes = parse_scopes(spec.get("scopes", ""))
            token = await run_in_threadpool(create_token, store, spec.get("name", ""), scopes)
        except ValueError as e:
            raise HTTPException(409 if "exists already" in str(e) else 422, str(e)) from None
        return {"name": spec["name"], "scopes": scopes, "token": token}

    @app.delete("/v1/clients/{name}")
    async def remove_client(name: str) -> dict[str, Any]:
        if not await run_in_threadpool(store.remove_client, name):
            raise HTTPException(404, f"no client {name!r}")
        auth.forget(name)
        return {"name": name, "removed": True}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        try:
            counts = await run_in_threadpool(store.counts)
        except StoreUnavailable as e:
            return JSONResponse({"status": "unavailable", "detail": str(e)}, status_code=503)
        return JSONResponse({"status": "ready", **counts, "history": engine.history_count(), "llm": settings.use_llm,
                             "llm_queue": engine.queue_depth()})

    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
