"""A mutating admission webhook for batch/v1 Jobs (Kueue-managed or not): AdmissionReview v1 in, a JSONPatch out.

The decisions are the Kubernetes adapter's (`adapters.base.decide`, `KubernetesAdapter.merge_patches`),
taken on the Job as it is being created:

* `metadata.annotations["schedmate.io/*"]`: the predicted p10/p50/p90, network sensitivity, which path
  answered (`schedmate.io/source`) and the service's job id (`schedmate.io/job-id`);
* `spec.activeDeadlineSeconds` from the predicted p90 x margin, never above the user's own deadline;
* for a Job with Kueue's `kueue.x-k8s.io/queue-name` label: the `kueue.x-k8s.io/priority-class` label
  (shortest predicted first), unless the user chose one, and for a network-sensitive multi-pod Job the pod
  template's `kueue.x-k8s.io/podset-preferred-topology` annotation.

Anything else (another kind, an UPDATE, a dry run is still annotated but not stored) is allowed unchanged.
The webhook fails open: any error after the review was parsed answers `allowed: true` with no patch and a
warning that says why (`failure_open`). Only a body that is not an AdmissionReview at all gets an HTTP
error (the API server then applies the webhook's `failurePolicy: Ignore`).
"""

from __future__ import annotations

import base64
import copy
import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from adapters.base import ActionKind, JobPhase, JobView, decide
from adapters.kubernetes import (
    ANNOTATION_PREFIX,
    DNS_LABEL,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    KubernetesAdapter,
    KubernetesConfig,
)
from schedmate.records import Annotation

API_VERSION = "admission.k8s.io/v1"
WORKDIR_ANNOTATION = ANNOTATION_PREFIX + "workdir"
"""Set by the user: where the Job's code is on a volume the service can read (under its --root)."""
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
_GENERATE_NAME = re.compile(r"[a-z0-9][-a-z0-9.]{0,200}")


class AdmissionError(ValueError):
    """The body is not an AdmissionReview v1 request."""


@dataclass(frozen=True)
class Review:
    uid: str
    kind: dict[str, Any]
    operation: str
    namespace: str
    object: dict[str, Any]
    user: str | None
    dry_run: bool

    @property
    def is_job_create(self) -> bool:
        return (self.operation == "CREATE" and self.kind.get("group") == "batch"
                and self.kind.get("kind") == "Job" and self.kind.get("version") == "v1")


def parse_review(doc: Any) -> Review:
    if not isinstance(doc, dict) or doc.get("kind") != "AdmissionReview":
        raise AdmissionError("expected an AdmissionReview")
    if doc.get("apiVersion") != API_VERSION:
        raise AdmissionError(f"expected apiVersion {API_VERSION}, got {doc.get('apiVersion')!r}")
    req = doc.get("request")
    if not isinstance(req, dict) or not isinstance(req.get("uid"), str) or not req["uid"]:
        raise AdmissionError("an AdmissionReview request needs request.uid")
    obj = req.get("object")
    user = (req.get("userInfo") or {}).get("username")
    return Review(uid=req["uid"], kind=req.get("kind") or {}, operation=str(req.get("operation", "")),
                  namespace=str(req.get("namespace") or (obj or {}).get("metadata", {}).get("namespace") or "default"),
                  object=obj if isinstance(obj, dict) else {}, user=user if isinstance(user, str) else None,
                  dry_run=bool(req.get("dryRun")))


def _gpus(container: dict[str, Any]) -> int:
    res = container.get("resources") or {}
    for part in ("limits", "requests"):
        for key in GPU_RESOURCES:
            v = (res.get(part) or {}).get(key)
            if v is not None:
                return int(str(v))
    return 0


def job_fields(review: Review, taken: bool = False) -> dict[str, Any]:
    """The service's `POST /v1/jobs` fields for the Job being created. `taken`: the plain id exists already
    (a Job recreated under the same name), so the id gets the review's uid."""
    obj = review.object
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
    if not containers:
        raise ValueError("the Job's pod template has no containers")
    parallelism = max(1, int(spec.get("parallelism") or 1))
    per_pod = [_gpus(c) for c in containers]
    main = containers[per_pod.index(max(per_pod))]
    argv = [str(a) for a in (main.get("command") or []) + (main.get("args") or [])]
    command = shlex.join(argv) if argv else f"(entrypoint of image {main.get('image', '?')})"
    name = meta.get("name")
    if isinstance(name, str) and DNS_LABEL.fullmatch(name):
        job_id = f"{review.namespace}/{name}" + (f"@{review.uid[:8]}" if taken else "")
    else:
        gen = str(meta.get("generateName") or "job-")
        gen = gen if _GENERATE_NAME.fullmatch(gen) else "job-"
        job_id = f"{review.namespace}/{gen}@{review.uid[:8]}"
    deadline = spec.get("activeDeadlineSeconds")
    fields: dict[str, Any] = {"id": job_id, "command": command, "user": review.user,
                              "num_gpus": sum(per_pod) * parallelism}
    if isinstance(deadline, int) and deadline > 0:
        fields["requested_time_s"] = float(deadline)
    workdir = (meta.get("annotations") or {}).get(WORKDIR_ANNOTATION)
    if isinstance(workdir, str) and workdir:
        fields["workdir"] = workdir
    return fields


def job_view(review: Review, job_id: str) -> JobView:
    """The Job as the adapter's decisions see it: pending and never started."""
    meta, spec = review.object.get("metadata") or {}, review.object.get("spec") or {}
    labels = meta.get("labels") or {}
    deadline = spec.get("activeDeadlineSeconds")
    return JobView(id=job_id, phase=JobPhase.pending, raw_state="Admission",
                   time_limit_s=float(deadline) if isinstance(deadline, int) and deadline > 0 else None,
                   nodes=max(1, int(spec.get("parallelism") or 1)), namespace=review.namespace,
                   name=str(meta.get("name") or meta.get("generateName") or "job"),
                   queue=labels.get(QUEUE_LABEL), priority_class=labels.get(PRIORITY_LABEL), never_started=True)


def _pointer(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def json_patch(obj: dict[str, Any], merge: dict[str, Any], base: str = "") -> list[dict[str, Any]]:
    """RFC 6902 operations that apply a merge patch (of maps and scalars) to `obj`, which is updated too,
    so a later patch sees the maps an earlier one created. `add` of an existing member replaces it."""
    ops: list[dict[str, Any]] = []
    for key, value in merge.items():
        path = f"{base}/{_pointer(key)}"
        if isinstance(value, dict) and isinstance(obj.get(key), dict):
            ops += json_patch(obj[key], value, path)
        else:
            ops.append({"op": "add", "path": path, "value": copy.deepcopy(value)})
            obj[key] = copy.deepcopy(value)
    return ops


def response(uid: str, ops: list[dict[str, Any]] | None = None, warnings: list[str] | None = None) -> dict[str, Any]:
    resp: dict[str, Any] = {"uid": uid, "allowed": True}
    if ops:
        resp["patchType"] = "JSONPatch"
        resp["patch"] = base64.b64encode(json.dumps(ops, separators=(",", ":")).encode()).decode()
    if warnings:
        resp["warnings"] = [w[:200] for w in warnings]
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": resp}


def failure_open(uid: str, reason: str) -> dict[str, Any]:
    return response(uid, warnings=[f"schedmate: Job admitted without annotations ({reason})"])


def mutate(review: Review, job_id: str, annotation: Annotation, source: str,
           config: KubernetesConfig | None = None) -> dict[str, Any]:
    """The AdmissionReview response carrying the adapter's decisions for this Job as a JSONPatch."""
    cfg = (config or KubernetesConfig()).model_copy(update={"allow_extend": False})  # never above the user's own
    view = job_view(review, job_id)
    adapter = KubernetesAdapter(cfg)
    decision = decide(annotation, view, cfg)
    merges, _ = adapter.merge_patches(decision, view)
    obj = copy.deepcopy(review.object)
    ops: list[dict[str, Any]] = []
    ours = {"metadata": {"annotations": {ANNOTATION_PREFIX + "job-id": job_id, ANNOTATION_PREFIX + "source": source}}}
    ops += json_patch(obj, ours)
    for kind, patch, _reason in merges:
        if kind is ActionKind.priority and view.priority_class is not None:
            continue  # the user chose a priority class: theirs stands
        ops += json_patch(obj, patch)
    return response(review.uid, ops)
