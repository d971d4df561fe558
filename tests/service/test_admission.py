"""The Kubernetes mutating admission webhook, fed AdmissionReview v1 documents built as the API server sends
them, against the running service. No API server runs here: the patched Job is checked by applying the
JSONPatch (jsonpatch) and validating the result against the Kubernetes Job schema (kubernetes-validate)."""

from __future__ import annotations

import base64
import copy
import uuid
from pathlib import Path

import httpx
import jsonpatch
import kubernetes_validate
import pytest

from adapters.kubernetes import PREFERRED_TOPOLOGY, PRIORITY_LABEL, QUEUE_LABEL
from schedmate.service.app import Settings, create_token
from schedmate.service.db import Store

from .conftest import auth, start

JOBS = Path(__file__).resolve().parents[2] / "eval" / "datasets" / "code" / "jobs"
LLAMA = JOBS / "fsdp_llama7b_four_nodes"
COMMAND = (LLAMA / "command.txt").read_text().strip()
K8S_VERSION = "1.32"


def job_object(name: str | None = "llama-ft", namespace: str = "ml", pods: int = 4, gpus: int = 8,
               deadline: int | None = None, labels: dict | None = None, suspend: bool | None = None,
               annotations: dict | None = None) -> dict:
    meta: dict = {"namespace": namespace, "labels": labels or {}}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = "llama-ft-"
    if annotations:
        meta["annotations"] = annotations
    spec: dict = {"parallelism": pods, "completions": pods, "completionMode": "Indexed", "backoffLimit": 2,
                  "template": {"spec": {"restartPolicy": "Never", "containers": [
                      {"name": "trainer", "image": "registry.example/llama-ft:1",
                       "command": ["torchrun"], "args": COMMAND.split()[1:],
                       "resources": {"limits": {"nvidia.com/gpu": gpus}}},
                      {"name": "log-shipper", "image": "registry.example/shipper:2"}]}}}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    if suspend is not None:
        spec["suspend"] = suspend
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def review(obj: dict, operation: str = "CREATE", dry_run: bool = False, kind: dict | None = None) -> dict:
    """An AdmissionReview as the API server sends it to a mutating webhook."""
    kind = kind or {"group": "batch", "version": "v1", "kind": "Job"}
    resource = {"group": kind["group"], "version": kind["version"], "resource": kind["kind"].lower() + "s"}
    meta = obj.get("metadata", {})
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": kind, "resource": resource, "requestKind": kind,
        "requestResource": resource, "name": meta.get("name", ""), "namespace": meta.get("namespace"),
        "operation": operation, "userInfo": {"username": "alice", "uid": "u-1", "groups": ["system:authenticated"]},
        "object": obj, "oldObject": None, "dryRun": dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}


@pytest.fixture
def webhook(tmp_path):
    db = str(tmp_path / "k8s.sqlite")
    token = create_token(Store(db), "apiserver", ["submit", "read"])
    running = start(Settings(db=db, roots=[JOBS], uploads_dir=tmp_path / "uploads"))
    h = auth(token)
    for i in range(6):  # history: earlier runs of the same job took two hours
        httpx.post(f"{running.url}/v1/jobs", json={"id": f"ml/past-{i}", "command": COMMAND, "user": "alice",
                                                    "workdir": str(LLAMA), "num_gpus": 32}, headers=h, timeout=60)
        httpx.post(f"{running.url}/v1/jobs/ml/past-{i}/finish", json={"runtime_s": 7200 + 60 * i}, headers=h)
    yield running, h
    running.stop()


def admit(running, h, doc: dict) -> dict:
    r = httpx.post(f"{running.url}/v1/admission/kubernetes", json=doc, headers=h, timeout=60)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["apiVersion"] == "admission.k8s.io/v1" and out["kind"] == "AdmissionReview"
    assert out["response"]["uid"] == doc["request"]["uid"] and out["response"]["allowed"] is True
    return out["response"]


def patched(obj: dict, resp: dict) -> dict:
    assert resp["patchType"] == "JSONPatch"
    ops = jsonpatch.JsonPatch.from_string(base64.b64decode(resp["patch"]).decode())
    out = ops.apply(copy.deepcopy(obj))
    kubernetes_validate.validate(out, K8S_VERSION, strict=True)  # still a valid batch/v1 Job
    return out


def test_a_plain_job_gets_its_predictions_and_a_deadline_from_the_p90_but_no_kueue_labels(webhook):
    running, h = webhook
    obj = job_object(annotations={"schedmate.io/workdir": str(LLAMA)})
    job = patched(obj, admit(running, h, review(obj)))
    ann = job["metadata"]["annotations"]
    assert ann["schedmate.io/job-id"] == "ml/llama-ft" and ann["schedmate.io/source"] == "static"
    p90 = float(ann["schedmate.io/predicted-p90-s"])
    assert 7200 <= p90 and ann["schedmate.io/network-sensitivity"] == "1.00"
    assert job["spec"]["activeDeadlineSeconds"] >= p90 * 1.25
    assert PRIORITY_LABEL not in job["metadata"]["labels"]  # not Kueue-managed: priority left alone
    assert "annotations" not in job["spec"]["template"].get("metadata", {})
    stored = httpx.get(f"{running.url}/v1/jobs/ml/llama-ft", headers=h).json()
    assert stored["request"]["num_gpus"] == 32 and stored["request"]["user"] == "alice"


def test_a_users_own_deadline_is_never_raised_and_their_priority_class_is_kept(webhook):
    running, h = webhook
    labels = {QUEUE_LABEL: "team-a", PRIORITY_LABEL: "their-own"}
    obj = job_object(name="short-deadline", deadline=600, labels=labels, suspend=True,
                     annotations={"schedmate.io/workdir": str(LLAMA)})
    job = patched(obj, admit(running, h, review(obj)))
    assert job["spec"]["activeDeadlineSeconds"] == 600
    assert job["metadata"]["labels"][PRIORITY_LABEL] == "their-own"
    generous = job_object(name="generous-deadline", deadline=10 * 86400, annotations={"schedmate.io/workdir": str(LLAMA)})
    job = patched(generous, admit(running, h, review(generous)))
    assert job["spec"]["activeDeadlineSeconds"] < 10 * 86400  # tightened to the prediction, never raised


def test_a_kueue_job_gets_a_priority_class_and_a_topology_preference_for_its_network_sensitive_pods(webhook):
    running, h = webhook
    obj = job_object(name="kueue-llama", labels={QUEUE_LABEL: "team-a"}, suspend=True,
                     annotations={"schedmate.io/workdir": str(LLAMA)})
    job = patched(obj, admit(running, h, review(obj)))
    assert job["metadata"]["labels"][PRIORITY_LABEL] in ("schedmate-short", "schedmate-medium", "schedmate-long")
    assert job["metadata"]["labels"][QUEUE_LABEL] == "team-a"
    assert job["spec"]["template"]["metadata"]["annotations"][PREFERRED_TOPOLOGY] == "cloud.provider.com/topology-rack"
    one_pod = job_object(name="kueue-one-pod", pods=1, labels={QUEUE_LABEL: "team-a"}, suspend=True,
                         annotations={"schedmate.io/workdir": str(LLAMA)})
    job = patched(one_pod, admit(running, h, review(one_pod)))
    assert "metadata" not in job["spec"]["template"]  # one pod: nothing to keep together


def test_other_kinds_updates_and_dry_runs_are_answered_without_being_stored(webhook):
    running, h = webhook
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": {}}
    resp = admit(running, h, review(pod, kind={"group": "", "version": "v1", "kind": "Pod"}))
    assert "patch" not in resp
    assert "patch" not in admit(running, h, review(job_object(name="upd"), operation="UPDATE"))
    seen = job_object(name="seen", annotations={"schedmate.io/job-id": "ml/seen"})  # a reinvocation
    assert "patch" not in admit(running, h, review(seen))
    assert httpx.get(f"{running.url}/v1/jobs/ml/seen", headers=h).status_code == 404
    obj = job_object(name="dry")
    resp = admit(running, h, review(obj, dry_run=True))
    assert patched(obj, resp)["metadata"]["annotations"]["schedmate.io/job-id"] == "ml/dry"
    assert httpx.get(f"{running.url}/v1/jobs/ml/dry", headers=h).status_code == 404


def test_a_job_recreated_under_the_same_name_and_a_generated_name_get_their_own_ids(webhook):
    running, h = webhook
    first = review(job_object(name="again"))
    second = review(job_object(name="again"))
    assert patched(first["request"]["object"], admit(running, h, first))["metadata"]["annotations"][
        "schedmate.io/job-id"] == "ml/again"
    again_id = patched(second["request"]["object"], admit(running, h, second))["metadata"]["annotations"][
        "schedmate.io/job-id"]
    assert again_id == f"ml/again@{second['request']['uid'][:8]}"
    gen = review(job_object(name=None))
    gen_id = patched(gen["request"]["object"], admit(running, h, gen))["metadata"]["annotations"]["schedmate.io/job-id"]
    assert gen_id == f"ml/llama-ft-@{gen['request']['uid'][:8]}"
    for jid in ("ml/again", again_id, gen_id):
        assert httpx.get(f"{running.url}/v1/jobs/{jid}", headers=h).status_code == 200


def test_it_fails_open_on_an_error_after_parsing_and_refuses_what_is_no_admission_review(webhook, tmp_path):
    running, h = webhook
    outside = job_object(name="outside", annotations={"schedmate.io/workdir": str(tmp_path)})
    resp = admit(running, h, review(outside))
    assert "patch" not in resp and "outside the allowed roots" in resp["warnings"][0]
    no_containers = job_object(name="empty")
    no_containers["spec"]["template"]["spec"]["containers"] = []
    resp = admit(running, h, review(no_containers))
    assert "patch" not in resp and "no containers" in resp["warnings"][0]
    url = f"{running.url}/v1/admission/kubernetes"
    assert httpx.post(url, content=b"{not json", headers=h).status_code == 400
    assert httpx.post(url, json={"kind": "Pod"}, headers=h).status_code == 400
    no_uid = review(job_object())
    del no_uid["request"]["uid"]
    assert httpx.post(url, json=no_uid, headers=h).status_code == 400
    assert httpx.post(url, json=review(job_object())).status_code == 401  # a token is needed by default
    metrics = httpx.get(f"{running.url}/metrics").text
    assert 'schedmate_events_total{event="admission_failed_open"} 2.0' in metrics
