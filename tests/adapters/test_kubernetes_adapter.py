"""The Kubernetes adapter: Job parsing, the kubectl commands it plans, and patches that really apply."""

import json
import shutil
import subprocess

import pytest
from conftest import EXAMPLES, NOW, compare_with_reference

from adapters.base import ActionKind, AdapterError, JobPhase, Plan, load_annotations
from adapters.kubernetes import (
    PREFERRED_TOPOLOGY,
    PRIORITY_LABEL,
    KubernetesAdapter,
    KubernetesConfig,
    parse_jobs_json,
)
from schedmate.records import Annotation, DurationEstimate


def example_plan(**cfg) -> Plan:
    adapter = KubernetesAdapter(KubernetesConfig(**cfg))
    state = adapter.parse_state((EXAMPLES / "kubectl_jobs.json").read_text(), now=NOW)
    return adapter.plan(load_annotations(EXAMPLES / "annotations_k8s.jsonl"), state)


def test_the_example_plan_matches_the_committed_reference():
    compare_with_reference(example_plan().render(), "kubernetes_plan.txt")


def test_job_phases_come_from_suspend_active_and_conditions():
    jobs = parse_jobs_json((EXAMPLES / "kubectl_jobs.json").read_text(), now=NOW)
    assert {k: v.phase for k, v in jobs.items() if k in ("ml/short-eval", "ml/hung-run", "ml/done")} == {
        "ml/short-eval": JobPhase.pending, "ml/hung-run": JobPhase.running, "ml/done": JobPhase.finished}
    assert jobs["ml/hung-run"].elapsed_s == 5400
    assert (jobs["ml/short-eval"].queue, jobs["ml/short-eval"].never_started) == ("team-a", True)


@pytest.mark.parametrize("job_id", ["ml/--all", "-n", "ml/a b", "kube-system/x/y", "ML/Upper", "a;b", "", "x" * 64])
def test_ids_that_are_not_dns_labels_are_skipped(job_id):
    state = parse_jobs_json((EXAMPLES / "kubectl_jobs.json").read_text(), now=NOW)
    plan = KubernetesAdapter().plan([Annotation(job_id=job_id, predicted_duration=DurationEstimate.point(60))], state)
    assert plan.actions == [] and [s.reason for s in plan.skips] == ["malformed kubernetes job id"]


def test_an_id_without_namespace_uses_the_configured_one():
    state = parse_jobs_json((EXAMPLES / "kubectl_jobs.json").read_text(), now=NOW)
    plan = KubernetesAdapter(KubernetesConfig(namespace="ml")).plan(
        [Annotation(job_id="short-eval", predicted_duration=DurationEstimate.point(60))], state)
    assert plan.actions and all(a.job_id == "ml/short-eval" for a in plan.actions)


def test_a_bad_namespace_option_is_refused():
    with pytest.raises(AdapterError, match="DNS-1123"):
        KubernetesAdapter(KubernetesConfig(namespace="--all-namespaces"))


def test_unreadable_kubectl_output_is_an_error():
    with pytest.raises(AdapterError, match="kubectl get jobs"):
        parse_jobs_json("<html>")


def test_each_patch_is_one_json_argv_element_after_type_merge():
    for a in example_plan().actions:
        if a.argv[1] == "patch":
            assert a.argv[2:4] == ("job", a.job_id.split("/")[1]) and a.argv[6:8] == ("--type", "merge")
            json.loads(a.argv[9])


def test_the_priority_class_follows_the_predicted_runtime():
    plan = example_plan()
    labels = {a.job_id: json.loads(a.argv[9])["metadata"]["labels"][PRIORITY_LABEL]
              for a in plan.actions if a.kind is ActionKind.priority}
    assert labels == {"ml/short-eval": "schedmate-short", "ml/llm-pretrain": "schedmate-long",
                      "ml/tight-limit": "schedmate-medium"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_every_planned_patch_applies_to_its_job_manifest_with_kubectl_offline(tmp_path):
    """`kubectl patch --local` needs no cluster: it applies the merge patch to the file and prints the result."""
    items = {f"{i['metadata']['namespace']}/{i['metadata']['name']}": i
             for i in json.loads((EXAMPLES / "kubectl_jobs.json").read_text())["items"]}
    patches = [a for a in example_plan(require_topology=False).actions if a.argv[1] == "patch"]
    assert {a.kind for a in patches} == {ActionKind.annotate, ActionKind.time_limit, ActionKind.priority,
                                        ActionKind.topology}
    for a in patches:
        manifest = tmp_path / "job.json"
        manifest.write_text(json.dumps({k: v for k, v in items[a.job_id].items() if k != "status"}))
        p = subprocess.run(["kubectl", "patch", "--local", "-f", str(manifest), "--type", "merge",
                            "--patch", a.argv[9], "-o", "json"], capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 0, p.stderr
        job = json.loads(p.stdout)
        if a.kind is ActionKind.time_limit:
            assert job["spec"]["activeDeadlineSeconds"] == json.loads(a.argv[9])["spec"]["activeDeadlineSeconds"]
        if a.kind is ActionKind.topology:
            assert job["spec"]["template"]["metadata"]["annotations"][PREFERRED_TOPOLOGY].endswith("topology-rack")
            assert job["spec"]["template"]["spec"]["containers"][0]["name"] == "train"  # merged, not replaced
        if a.kind is ActionKind.annotate:
            assert all(k.startswith("schedmate.io/") for k in job["metadata"]["annotations"])
        if a.kind is ActionKind.priority:
            assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
