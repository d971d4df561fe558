"""Kubernetes adapter: the same decisions as Slurm, for batch/v1 Jobs, as `kubectl` commands.

| decision | command | notes |
|---|---|---|
| summary | `kubectl patch job` merge patch of `metadata.annotations["schedmate.io/..."]` | typed values only |
| time limit | merge patch of `spec.activeDeadlineSeconds` | mutable on a Job; counts from (re)start |
| priority | merge patch of the label `kueue.x-k8s.io/priority-class` | Kueue keeps that label mutable; a pod's `priorityClassName` is not, so Jobs outside Kueue are skipped |
| topology | merge patch of the pod template annotation `kueue.x-k8s.io/podset-preferred-topology` (or `-required-`) | Kueue topology-aware scheduling; only while the Job is suspended and never started, when the template may change |
| failure | `kubectl delete job --cascade=background` / `kubectl delete pods -l job-name=...` | deleting the pods makes the Job controller recreate them (a restart, counted against backoffLimit) |

A job id is `namespace/name` or `name` (in the configured namespace); both parts must be DNS-1123 labels,
so an id can never be read by kubectl as a flag.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from typing import Any

from adapters.base import (
    ADAPTERS,
    Action,
    ActionKind,
    AdapterConfig,
    AdapterError,
    ClusterAdapter,
    Decision,
    JobPhase,
    JobView,
    Skip,
    Verdict,
    read_command,
)

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
ANNOTATION_PREFIX = "schedmate.io/"


class KubernetesConfig(AdapterConfig):
    namespace: str = "default"
    """Namespace of job ids written without one."""
    priority_classes: tuple[str, ...] = ("schedmate-short", "schedmate-medium", "schedmate-long")
    """Kueue WorkloadPriorityClass names from shortest-predicted (highest priority) to longest."""
    topology_label: str = "cloud.provider.com/topology-rack"
    """Node label of the topology level a sensitive job should fit in (a rack / leaf switch)."""
    require_topology: bool = False
    """Use Kueue's required (wait until it fits) instead of preferred topology."""
    kubectl: str = "kubectl"


@ADAPTERS.register("kubernetes")
class KubernetesAdapter(ClusterAdapter):
    name = "kubernetes"
    config: KubernetesConfig

    def __init__(self, config: KubernetesConfig | None = None) -> None:
        super().__init__(config or KubernetesConfig())
        if not DNS_LABEL.fullmatch(self.config.namespace):
            raise AdapterError(f"namespace {self.config.namespace!r} is not a DNS-1123 label")

    def valid_id(self, job_id: str) -> bool:
        parts = job_id.split("/")
        return 1 <= len(parts) <= 2 and all(DNS_LABEL.fullmatch(p) for p in parts)

    def state_key(self, job_id: str) -> str:
        return job_id if "/" in job_id else f"{self.config.namespace}/{job_id}"

    def read_state(self) -> dict[str, JobView]:
        return parse_jobs_json(read_command([self.config.kubectl, "get", "jobs", "--all-namespaces", "-o", "json"]))

    def parse_state(self, text: str, now: float | None = None) -> dict[str, JobView]:
        return parse_jobs_json(text, now)

    def _patch(self, job: JobView, kind: ActionKind, patch: dict[str, Any], reason: str) -> Action:
        assert job.name and job.namespace
        return Action(job_id=f"{job.namespace}/{job.name}", kind=kind, reason=reason,
                      argv=(self.config.kubectl, "patch", "job", job.name, "--namespace", job.namespace,
                            "--type", "merge", "--patch", json.dumps(patch, sort_keys=True, separators=(",", ":"))))

    def merge_patches(self, d: Decision, job: JobView) -> tuple[list[tuple[ActionKind, dict[str, Any], str]], list[Skip]]:
        """The merge patches of the Job that carry out a decision's annotations, time limit, Kueue priority
        and topology, each with its kind and reason (`kubectl patch` here, a JSONPatch in the admission
        webhook, `adapters/kubernetes/admission.py`)."""
        cfg = self.config
        jid = f"{job.namespace}/{job.name}"
        out: list[tuple[ActionKind, dict[str, Any], str]] = []
        skips: list[Skip] = []
        if job.phase in (JobPhase.pending, JobPhase.running) and d.facts:
            ann = {ANNOTATION_PREFIX + k: v for k, v in d.facts.items()}
            out.append((ActionKind.annotate, {"metadata": {"annotations": ann}}, "annotation summary"))
        if d.time_limit_s:
            was = "none" if job.time_limit_s is None else f"{job.time_limit_s:.0f} s"
            out.append((ActionKind.time_limit, {"spec": {"activeDeadlineSeconds": d.time_limit_s}},
                        f"{d.time_limit_basis}; was {was}"))
        if d.priority_score is not None:
            classes = cfg.priority_classes
            cls = classes[min(len(classes) - 1, int(d.priority_score * len(classes)))]
            if job.queue is None:
                skips.append(Skip(job_id=jid, reason=("priority: not managed by Kueue (no queue-name label), and "
                                                      "a pod's priorityClassName cannot change")))
            elif job.priority_class != cls:
                out.append((ActionKind.priority, {"metadata": {"labels": {PRIORITY_LABEL: cls}}},
                            f"shortest-predicted-first (score {d.priority_score})"))
        if d.topology_wait_s:
            if job.queue is None or not job.never_started:
                skips.append(Skip(job_id=jid, reason="topology: needs a Kueue-managed Job that is suspended and never "
                                                     "started (its pod template is immutable otherwise)"))
            else:
                key = REQUIRED_TOPOLOGY if cfg.require_topology else PREFERRED_TOPOLOGY
                patch = {"spec": {"template": {"metadata": {"annotations": {key: cfg.topology_label}}}}}
                reason = (f"network-sensitive {job.nodes}-pod job: keep it within one {cfg.topology_label} "
                          f"(worth up to {d.topology_wait_s} s of waiting)")
                out.append((ActionKind.topology, patch, reason))
        return out, skips

    def render(self, d: Decision, job: JobView) -> tuple[list[Action], list[Skip]]:
        cfg = self.config
        jid = f"{job.namespace}/{job.name}"
        merges, skips = self.merge_patches(d, job)
        acts = [self._patch(job, kind, patch, reason) for kind, patch, reason in merges
                if kind is ActionKind.annotate]
        if d.failure is Verdict.terminate:
            acts.append(Action(job_id=jid, kind=ActionKind.terminate, reason="confident failure signal, not recoverable",
                               argv=(cfg.kubectl, "delete", "job", str(job.name), "--namespace", str(job.namespace),
                                     "--cascade=background")))
        elif d.failure is Verdict.requeue:
            acts.append(Action(job_id=jid, kind=ActionKind.requeue,
                               reason="confident recoverable failure: pods recreated by the Job controller",
                               argv=(cfg.kubectl, "delete", "pods", "--namespace", str(job.namespace),
                                     "--selector", f"job-name={job.name}")))
        acts += [self._patch(job, kind, patch, reason) for kind, patch, reason in merges
                 if kind is not ActionKind.annotate]
        return acts, skips


def _time(v: Any) -> float | None:
    if not isinstance(v, str):
        return None
    try:
        return datetime.fromisoformat(v).timestamp()  # Python 3.11 reads the trailing Z
    except ValueError:
        return None


def parse_jobs_json(text: str, now: float | None = None) -> dict[str, JobView]:
    """`kubectl get jobs -o json` (a List) or one Job object, keyed `namespace/name`."""
    try:
        doc = json.loads(text)
        items = doc["items"] if doc.get("kind", "").endswith("List") or "items" in doc else [doc]
        if not isinstance(items, list):
            raise TypeError("items is not a list")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise AdapterError(f"kubectl get jobs -o json: unexpected output ({e})") from None
    now = time.time() if now is None else now
    out: dict[str, JobView] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("kind", "Job") != "Job":
            continue
        meta, spec, status = (item.get(k) or {} for k in ("metadata", "spec", "status"))
        name, ns = meta.get("name"), meta.get("namespace") or "default"
        if not isinstance(name, str) or not DNS_LABEL.fullmatch(name) or not DNS_LABEL.fullmatch(ns):
            continue  # not addressable safely; an annotation for it is reported as unknown
        conditions = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
        start = _time(status.get("startTime"))
        if conditions & {"Complete", "Failed"}:
            phase, state = JobPhase.finished, min(conditions & {"Complete", "Failed"})
        elif spec.get("suspend"):
            phase, state = JobPhase.pending, "Suspended"
        elif (status.get("active") or 0) > 0:
            phase, state = JobPhase.running, "Active"
        elif start is None:
            phase, state = JobPhase.pending, "NotStarted"
        else:
            phase, state = JobPhase.other, "Starting"
        labels = meta.get("labels") or {}
        deadline = spec.get("activeDeadlineSeconds")
        out[f"{ns}/{name}"] = JobView(
            id=f"{ns}/{name}", phase=phase, raw_state=state,
            elapsed_s=max(0.0, now - start) if phase is JobPhase.running and start else 0.0,
            time_limit_s=float(deadline) if isinstance(deadline, int) and deadline > 0 else None,
            nodes=max(1, int(spec.get("parallelism") or 1)),
            namespace=ns, name=name, queue=labels.get(QUEUE_LABEL), priority_class=labels.get(PRIORITY_LABEL),
            never_started=start is None,
        )
    return out
