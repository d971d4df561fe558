"""`schedmate adapt slurm|kubernetes`: act on an annotations file in a real cluster (dry run by default)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from adapters.base import ADAPTERS, AdapterConfig, AdapterError, ClusterAdapter, load_annotations
from adapters.kubernetes import KubernetesConfig
from adapters.slurm import SlurmConfig

HELP_TEXT = """Turn job annotations into scheduler commands for a real cluster.

Reads JSON lines of Annotation (job_id, predicted_duration{p10,p50,p90}, predicted_remaining_s,
network_sensitivity, spread_slowdown, failure{category, failed, confidence, recoverable, action}), reads
the cluster's current jobs, and plans per job: a summary written back, a time limit from the p90
(never below the time already used, never above the user's request without --allow-extend), a
shortest-predicted-first priority for pending jobs, a compact-placement wait for pending
network-sensitive multi-node jobs, and, for confident failure signals on running jobs, a cancel or a
requeue. Without --apply it prints exactly the commands it would run; every job it leaves alone is
listed with the reason. Exit codes: 0 done, 1 a command failed, 2 bad input or unreadable cluster state.
"""
HELP = re.sub(r"(?<!\n)\n(?!\n)", " ", HELP_TEXT)  # one paragraph per blank-line block, reflowed by rich


def _common(cfg: dict[str, Any], min_confidence: float, allow_extend: bool, no_requeue: bool, margin: float,
            sensitivity: float, max_wait: float, overwrite_comment: bool) -> dict[str, Any]:
    return cfg | {"min_confidence": min_confidence, "allow_extend": allow_extend,
                  "requeue_recoverable": not no_requeue, "time_limit_margin": margin,
                  "sensitivity_threshold": sensitivity, "max_topology_wait_s": max_wait,
                  "overwrite_comment": overwrite_comment}


def _run(adapter: ClusterAdapter, annotations: Path, state: Path | None, apply: bool, as_json: bool,
         now: float | None) -> None:
    try:
        if state is not None and apply:
            raise AdapterError("--state is for dry runs: --apply always reads the live cluster state")
        anns = load_annotations(annotations)
        if state is not None:  # a dump describes the moment it was written, not now
            jobs = adapter.parse_state(state.read_text(), now if now is not None else state.stat().st_mtime)
        else:
            jobs = adapter.read_state()
    except (AdapterError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise typer.Exit(2)
    plan = adapter.plan(anns, jobs)
    if as_json and not apply:
        print(plan.model_dump_json(indent=2))
        return
    results = adapter.apply(plan, dry_run=not apply)
    for s in plan.skips if apply else []:
        print(f"skip {s.job_id}: {s.reason}")
    if any(not r.ok for r in results):
        raise typer.Exit(1)


AnnotationsOpt = Annotated[Path, typer.Option("--annotations", "-a", help="JSON lines of Annotation.")]
StateOpt = Annotated[Path | None, typer.Option(
    "--state", help="Read the jobs from this saved dump instead of the cluster (dry runs only).")]
ApplyOpt = Annotated[bool, typer.Option("--apply", help="Run the commands (default: print them).")]
NowOpt = Annotated[float | None, typer.Option(
    "--now", help="With --state: when the dump was taken, epoch seconds (default: the file's modification time).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Dry run: print the plan as JSON.")]
_D = AdapterConfig()
MinConfOpt = Annotated[float, typer.Option("--min-confidence", min=0, max=1,
                                           help="Act on failure signals at or above this confidence.")]
ExtendOpt = Annotated[bool, typer.Option("--allow-extend", help="Allow raising a time limit above the request.")]
NoRequeueOpt = Annotated[bool, typer.Option("--no-requeue", help="End recoverable failures instead of requeueing.")]
MarginOpt = Annotated[float, typer.Option("--margin", min=1.0, help="Time limit = predicted p90 x this.")]
SensOpt = Annotated[float, typer.Option("--sensitivity", min=0, max=1,
                                        help="Network sensitivity from which a multi-node job waits for locality.")]
WaitOpt = Annotated[float, typer.Option("--max-wait", min=0, help="Longest locality wait, seconds.")]
OverwriteOpt = Annotated[bool, typer.Option("--overwrite-comment",
                                            help="Slurm: replace a Comment schedmate did not write.")]


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    adapt_app = typer.Typer(rich_markup_mode="markdown", help="Act on annotations in a real Slurm or Kubernetes cluster (dry run by default).",
                            no_args_is_help=True)
    app.add_typer(adapt_app, name="adapt")

    @adapt_app.command("slurm", help=HELP + "\nSlurm: scontrol update (Comment, TimeLimit, Nice, Switches), "
                       "scontrol requeue, scancel; state from squeue --json.")
    def adapt_slurm(
        annotations: AnnotationsOpt,
        state: StateOpt = None,
        apply: ApplyOpt = False,
        as_json: JsonOpt = False,
        now: NowOpt = None,
        min_confidence: MinConfOpt = _D.min_confidence,
        allow_extend: ExtendOpt = False,
        no_requeue: NoRequeueOpt = False,
        margin: MarginOpt = _D.time_limit_margin,
        sensitivity: SensOpt = _D.sensitivity_threshold,
        max_wait: WaitOpt = _D.max_topology_wait_s,
        overwrite_comment: OverwriteOpt = False,
        max_nice: Annotated[int, typer.Option("--max-nice", min=0, help="Nice of the longest predicted jobs.")] = 1000,
    ) -> None:
        cfg = SlurmConfig(**_common({"max_nice": max_nice}, min_confidence, allow_extend, no_requeue, margin,
                                    sensitivity, max_wait, overwrite_comment))
        _run(ADAPTERS.create("slurm", config=cfg), annotations, state, apply, as_json, now)

    @adapt_app.command("kubernetes", help=HELP + "\nKubernetes (batch/v1 Jobs): kubectl patch --type merge "
                       "(schedmate.io/* annotations, activeDeadlineSeconds, Kueue priority-class label and "
                       "topology annotation), kubectl delete; state from kubectl get jobs -o json.")
    def adapt_kubernetes(
        annotations: AnnotationsOpt,
        state: StateOpt = None,
        apply: ApplyOpt = False,
        as_json: JsonOpt = False,
        now: NowOpt = None,
        min_confidence: MinConfOpt = _D.min_confidence,
        allow_extend: ExtendOpt = False,
        no_requeue: NoRequeueOpt = False,
        margin: MarginOpt = _D.time_limit_margin,
        sensitivity: SensOpt = _D.sensitivity_threshold,
        max_wait: WaitOpt = _D.max_topology_wait_s,
        namespace: Annotated[str, typer.Option("--namespace", "-n", help="Namespace of ids without one.")] = "default",
        priority_classes: Annotated[str, typer.Option(
            "--priority-classes", help="Kueue WorkloadPriorityClasses, shortest-predicted first, comma-separated.")]
            = ",".join(KubernetesConfig().priority_classes),
        topology_label: Annotated[str, typer.Option(
            "--topology-label", help="Node label of the rack/switch level for Kueue topology-aware scheduling.")]
            = KubernetesConfig().topology_label,
        require_topology: Annotated[bool, typer.Option(
            "--require-topology", help="Kueue required (not preferred) topology for sensitive jobs.")] = False,
    ) -> None:
        classes = tuple(c.strip() for c in priority_classes.split(",") if c.strip())
        try:
            cfg = KubernetesConfig(**_common(
                {"namespace": namespace, "priority_classes": classes, "topology_label": topology_label,
                 "require_topology": require_topology},
                min_confidence, allow_extend, no_requeue, margin, sensitivity, max_wait, False))
            if not classes:
                raise AdapterError("--priority-classes needs at least one name")
            adapter = ADAPTERS.create("kubernetes", config=cfg)
        except AdapterError as e:
            print(f"error: {e}", file=sys.stderr)
            raise typer.Exit(2)
        _run(adapter, annotations, state, apply, as_json, now)

    from adapters.slurm_live.cli import register_plugin_command

    register_plugin_command(adapt_app)
