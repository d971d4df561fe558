"""`POST /v1/admission/kubernetes`: the mutating admission webhook's HTTP side (the decisions and the JSONPatch
are `adapters/kubernetes/admission.py`).

A Job CREATE is annotated like `POST /v1/jobs` (static path at once) and stored under its `namespace/name`
(a dry run is answered but not stored); the answer is an AdmissionReview v1 response with a JSONPatch.
It fails open: after the review parsed, any error (a refused workdir, a timeout, the database) answers
`allowed: true` without a patch and with a warning; a body that is no AdmissionReview gets 400.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Request

from adapters.kubernetes import ANNOTATION_PREFIX
from adapters.kubernetes.admission import (
    AdmissionError,
    failure_open,
    job_fields,
    mutate,
    parse_review,
    response,
)
from schedmate.records import Annotation
from schedmate.service.annotate import AnnotationEngine, JobRequest
from schedmate.service.db import Store
from schedmate.service.metrics import Metrics, event

if TYPE_CHECKING:
    from schedmate.service.app import Settings

log = logging.getLogger("schedmate.service.admission")
PATH = "/v1/admission/kubernetes"
JOB_ID_ANNOTATION = ANNOTATION_PREFIX + "job-id"


def add_admission_route(app: FastAPI, settings: Settings, store: Store, engine: AnnotationEngine, metrics: Metrics,
                        accept_annotation: Callable[[JobRequest], Awaitable[dict[str, Any]]]) -> None:
    async def store_job(review: Any, who: str) -> tuple[JobRequest, dict[str, Any]]:
        req = JobRequest.model_validate(job_fields(review))
        body = await accept_annotation(req)
        if review.dry_run:
            return req, body
        ok = await asyncio.wrap_future(store.submit(store.op_add_job(
            req.id, who, req.model_dump(mode="json"), body, body["source"])))
        if not ok:  # a Job recreated under a name seen before: a new job, its id gets the review's uid
            req = JobRequest.model_validate(job_fields(review, taken=True))
            body = await accept_annotation(req)
            ok = await asyncio.wrap_future(store.submit(store.op_add_job(
                req.id, who, req.model_dump(mode="json"), body, body["source"])))
            if not ok:
                raise ValueError(f"job {req.id} was admitted already")
        metrics.inc("jobs_admitted")
        return req, body

    @app.post(PATH, openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
        "type": "object", "description": "AdmissionReview (admission.k8s.io/v1)"}}}}})
    async def admission_kubernetes(request: Request) -> dict[str, Any]:
        who = getattr(request.state, "client", "kubernetes-admission")  # AuthMiddleware checked the token
        try:
            review = parse_review(json.loads(await request.body()))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise HTTPException(400, f"malformed JSON: {e}") from None
        except AdmissionError as e:
            raise HTTPException(400, str(e)) from None
        annotations = (review.object.get("metadata") or {}).get("annotations") or {}
        if not review.is_job_create or JOB_ID_ANNOTATION in annotations:
            return response(review.uid)  # not ours, or annotated already (a reinvocation)
        try:
            req, body = await store_job(review, who)
            annotation = Annotation.model_validate(body["annotation"])
            return mutate(review, req.id, annotation, body["source"], settings.kubernetes)
        except Exception as e:  # noqa: BLE001 - a webhook that fails must not block the cluster's Jobs
            reason = e.detail if isinstance(e, HTTPException) else f"{type(e).__name__}: {e}"
            metrics.inc("admission_failed_open")
            event(log, logging.WARNING, "admission failed open", uid=review.uid, reason=str(reason))
            return failure_open(review.uid, str(reason))
