"""The manifests under adapters/kubernetes/deploy/: every Kubernetes object valid against the Job-era schemas
(kubernetes-validate, strict; `kubectl apply --dry-run=client` needs an API server for its schemas and none
runs here), the cert-manager objects checked by hand, and the pieces agreeing with each other and with
`schedmate serve`. Then the webhook answers over HTTPS as the deployment serves it."""

from __future__ import annotations

import base64
import shutil
import ssl
import subprocess
import uuid
from pathlib import Path

import httpx
import kubernetes_validate
import pytest
import typer
import yaml

from schedmate.cli import app as cli_app
from schedmate.service.admission import PATH

from .conftest import serve_process

DEPLOY = Path(__file__).resolve().parents[2] / "adapters" / "kubernetes" / "deploy"
K8S_VERSIONS = ("1.30", "1.32")


def documents() -> list[dict]:
    docs = []
    for f in sorted(DEPLOY.glob("*.yaml")):
        if f.name != "kustomization.yaml":
            docs += [d for d in yaml.safe_load_all(f.read_text()) if d]
    return docs


def by_kind(kind: str) -> list[dict]:
    return [d for d in documents() if d["kind"] == kind]


def test_every_kubernetes_object_in_the_manifests_is_valid_for_its_schema():
    kinds = set()
    for doc in documents():
        if doc["apiVersion"].startswith("cert-manager.io/"):
            continue
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)
        kinds.add(doc["kind"])
    assert {"Deployment", "Service", "MutatingWebhookConfiguration", "ServiceAccount", "ClusterRole",
            "ClusterRoleBinding", "PersistentVolumeClaim", "Namespace", "NetworkPolicy"} <= kinds


def test_the_pieces_agree_the_webhook_reaches_the_service_with_the_certificate_the_pod_serves():
    (hook,) = by_kind("MutatingWebhookConfiguration")
    (svc,) = by_kind("Service")
    (deploy,) = by_kind("Deployment")
    (cert,) = by_kind("Certificate")
    (issuer,) = by_kind("Issuer")
    w = hook["webhooks"][0]
    ref = w["clientConfig"]["service"]
    assert (ref["name"], ref["namespace"], ref["port"]) == (svc["metadata"]["name"], svc["metadata"]["namespace"],
                                                           svc["spec"]["ports"][0]["port"])
    assert ref["path"] == PATH and w["failurePolicy"] == "Ignore" and w["sideEffects"] == "NoneOnDryRun"
    assert hook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == (
        f"{cert['metadata']['namespace']}/{cert['metadata']['name']}")
    assert f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc" in cert["spec"]["dnsNames"]
    assert cert["spec"]["issuerRef"]["name"] == issuer["metadata"]["name"] and "selfSigned" in issuer["spec"]
    pod = deploy["spec"]["template"]["spec"]
    secrets = {v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert cert["spec"]["secretName"] in secrets
    assert deploy["spec"]["replicas"] == 1  # SQLite: one writer


def test_the_deployments_arguments_are_options_schedmate_serve_has():
    (deploy,) = by_kind("Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "serve"
    serve = typer.main.get_command(cli_app).commands["serve"]  # type: ignore[attr-defined]
    known = {o for p in serve.params for o in p.opts}
    for a in args[1:]:
        assert a.split("=")[0] in known, a


def test_kustomize_builds_the_manifests_offline():
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    out = subprocess.run(["kubectl", "kustomize", str(DEPLOY)], capture_output=True, text=True, check=False,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert {d["kind"] for d in yaml.safe_load_all(out.stdout)} >= {"Deployment", "MutatingWebhookConfiguration"}


def test_the_webhook_answers_an_admission_review_over_https_as_deployed(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")

    def run(*cmd: str) -> None:
        subprocess.run(cmd, check=True, capture_output=True, cwd=tmp_path, timeout=60)

    # a CA and a server certificate for 127.0.0.1, as certificate.yaml has cert-manager make for the Service
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
        "-days", "1", "-subj", "/CN=schedmate-test-ca")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "tls.key", "-out", "tls.csr",
        "-subj", "/CN=schedmate.schedmate.svc")
    (tmp_path / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:schedmate.schedmate.svc\n")
    run("openssl", "x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "tls.crt", "-days", "1", "-extfile", "san.ext")
    trust = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    svc = serve_process(str(tmp_path / "svc.sqlite"), "--tls-cert", str(tmp_path / "tls.crt"),
                        "--tls-key", str(tmp_path / "tls.key"), "--admission-without-token", https=True,
                        verify=trust)
    try:
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "hello", "namespace": "team"},
               "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                   {"name": "c", "image": "busybox", "command": ["python", "train.py"]}]}}}}
        doc = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": str(uuid.uuid4()), "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "resource": {"group": "batch", "version": "v1", "resource": "jobs"}, "namespace": "team",
            "operation": "CREATE", "userInfo": {"username": "bob"}, "object": job, "dryRun": False}}
        r = httpx.post(f"{svc.url}{PATH}", json=doc, verify=trust, timeout=60)
        assert r.status_code == 200 and r.json()["response"]["allowed"] is True
        ops = base64.b64decode(r.json()["response"]["patch"]).decode()
        assert '"schedmate.io/job-id":"team/hello"' in ops  # the Job had no annotations: the map is added
        with pytest.raises(httpx.ConnectError):  # a client that does not trust the CA is refused
            httpx.get(f"{svc.url}/healthz", timeout=10)
    finally:
        svc.stop()
