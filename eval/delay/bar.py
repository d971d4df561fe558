"""The issue-16 bar, quickly: delay against `consolidate-rack` on the bar's cells, over any seeds.

    .venv/bin/python -m eval.delay.bar                                   # the bar's cells, seeds 0-2
    .venv/bin/python -m eval.delay.bar --cases tb09,tb15 --seeds 3-14 -o guard_wait_factor=32
    .venv/bin/python -m eval.delay.bar --cases static,d4g-1.5 --json /tmp/rows.jsonl

The bar (issue 16): with the CLI defaults, delay's mean JCT at most 1.05x `consolidate-rack`'s and its
p99 JCT at least 30 % lower, for the `none` and `oracle` annotators, on the 64-GPU testbed
(`nodes=16,gpus=4,rack=8`, `congested:8`) at loads 0.9 and 1.5 and on the real Philly machine list
overloaded (`derived:philly:6000:<seed>:3.2`, `congested:4`, the ablation case of `sweeps.py`).

Each cell prints the mean over seeds of the per-seed ratios (delay / `consolidate-rack`, as the
experiment's tables take them), the standard error of that mean (the seed-to-seed spread over the
square root of the number of seeds: how far a mean over these seeds may be from the mean over many),
and the per-seed ratios. The other cases (`CASES`) are the workloads where a guard rule may cost mean
JCT (helios, distributed, distributed-4gpu at loads 1.2-3.0, the static trace).

On the shared machine a testbed replay took 0.5-0.6 s, a Philly-list replay 15 s to 3 min.
Decisions never read the wall clock: every figure reproduces.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from eval.delay.workloads import (
    ANNOTATORS,
    CLUSTER,
    CLUSTER_4GPU,
    CLUSTER_PHILLY,
    CLUSTER_TESTBED,
    distributed,
    p99_floor,
    scheduler,
)
from schedmate.policies import build_scheduler
from schedmate.policies.schedulers import policy_options
from schedmate.records import Job
from schedmate.replay import replay
from schedmate.traces import load_trace

TARGET_MEAN, TARGET_P99 = 1.05, 0.70
"""The issue's bar against `consolidate-rack`: mean JCT at most 1.05x, p99 JCT at least 30 % lower."""


@dataclass(frozen=True)
class Case:
    cluster: str
    network: str
    jobs: Callable[[int], list[Job]]
    """seed -> jobs."""
    bar: bool = False
    """One of the issue's cells (else a workload checked for regressions)."""


def _helios(seed: int) -> list[Job]:
    return load_trace(f"synth:helios:3000:{seed}", target_load=0.9, cluster_gpus=256, max_gpus=64).jobs


def _static(seed: int) -> list[Job]:
    return [j.model_copy(update={"submit_time": 0.0}) for j in distributed(200, seed, 64)]


CASES: dict[str, Case] = {
    "tb09": Case(CLUSTER_TESTBED, "congested:8", lambda s: distributed(400, s, 64, 0.9), bar=True),
    "tb15": Case(CLUSTER_TESTBED, "congested:8", lambda s: distributed(400, s, 64, 1.5), bar=True),
    "philly-list": Case(CLUSTER_PHILLY, "congested:4", lambda s: load_trace(f"derived:philly:6000:{s}:3.2").jobs,
                        bar=True),
    "helios-4": Case(CLUSTER, "congested:4", _helios),
    "helios-8": Case(CLUSTER, "congested:8", _helios),
    "distributed": Case(CLUSTER, "congested:8", lambda s: distributed(800, s, 256, 0.9)),
    "d4g-1.2": Case(CLUSTER_4GPU, "congested:8", lambda s: distributed(800, s, 256, 1.2)),
    "d4g-1.5": Case(CLUSTER_4GPU, "congested:8", lambda s: distributed(800, s, 256, 1.5)),
    "d4g-2.0": Case(CLUSTER_4GPU, "congested:8", lambda s: distributed(800, s, 256, 2.0)),
    "d4g-3.0": Case(CLUSTER_4GPU, "congested:4", lambda s: distributed(800, s, 256, 3.0)),
    "static": Case(CLUSTER_TESTBED, "congested:8", _static),
}
BAR_CASES = tuple(name for name, c in CASES.items() if c.bar)


def parse_seeds(text: str) -> tuple[int, ...]:
    """`0,1,2` or `3-14` (inclusive) or a mix: `0-2,7`."""
    seeds: list[int] = []
    try:
        for part in (p.strip() for p in text.split(",") if p.strip()):
            lo, _, hi = part.partition("-")
            seeds += range(int(lo), int(hi) + 1) if hi else [int(lo)]
    except ValueError:
        raise typer.BadParameter(f"--seeds {text!r}: expected e.g. 0,1,2 or 3-14") from None
    if not seeds:
        raise typer.BadParameter("--seeds: give at least one seed")
    return tuple(seeds)


def rows(cases: tuple[str, ...], seeds: tuple[int, ...], options: list[str],
         annotators: tuple[str, ...] = ANNOTATORS) -> list[dict]:
    """One row per (case, seed, annotator): delay (with `options`, `schedmate replay -o` pairs) against
    `consolidate-rack` on the same jobs."""
    kwargs = policy_options("delay", options)  # fail fast on a bad option
    out = []
    for name in cases:
        case = CASES[name]
        for seed in seeds:
            jobs = case.jobs(seed)
            base = replay(jobs, scheduler=scheduler("consolidate-rack"), annotator="none", cluster=case.cluster,
                          network=case.network, seed=seed).summary
            floor = p99_floor(jobs)
            for ann in annotators:
                sched = build_scheduler("delay", **kwargs)
                s = replay(jobs, scheduler=sched, annotator=ann, cluster=case.cluster, network=case.network,
                           seed=seed).summary
                out.append({"case": name, "seed": seed, "annotator": ann, "options": " ".join(options),
                            "avg_jct_h": s.avg_jct_s / 3600, "p99_jct_h": s.p99_jct_s / 3600,
                            "base_avg_jct_h": base.avg_jct_s / 3600, "base_p99_jct_h": base.p99_jct_s / 3600,
                            "mean_ratio": s.avg_jct_s / base.avg_jct_s, "p99_ratio": s.p99_jct_s / base.p99_jct_s,
                            "p99_floor_ratio": floor / base.p99_jct_s, "preemptions": s.preemptions,
                            "guard_claims": getattr(sched.preemption, "claims", 0)})
    return out


def _mean_se(values: list[float]) -> tuple[float, float]:
    m = statistics.fmean(values)
    return m, (statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan)


def table(found: list[dict]) -> str:
    """Markdown: per (case, annotator) the mean ratios, their standard errors, the p99 floor and
    whether the bar is met (bar cells only)."""
    lines = ["| case | annotator | seeds | mean JCT ratio (SE) | p99 JCT ratio (SE) | p99 floor | met | per seed (mean / p99) |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    keys = dict.fromkeys((r["case"], r["annotator"]) for r in found)
    for case, ann in keys:
        cell = [r for r in found if r["case"] == case and r["annotator"] == ann]
        m, m_se = _mean_se([r["mean_ratio"] for r in cell])
        p, p_se = _mean_se([r["p99_ratio"] for r in cell])
        floor = statistics.fmean(r["p99_floor_ratio"] for r in cell)
        met = ("yes" if m <= TARGET_MEAN and p <= TARGET_P99 else "no") if CASES[case].bar else "-"
        per = " ".join(f"{r['mean_ratio']:.2f}/{r['p99_ratio']:.2f}" for r in cell)
        lines.append(f"| {case} | {ann} | {len(cell)} | {m:.3f} ({m_se:.3f}) | {p:.3f} ({p_se:.3f}) | {floor:.2f} "
                     f"| {met} | {per} |")
    return "\n".join(lines)


def main(
    cases: Annotated[str, typer.Option(help=f"Comma-separated cases of {', '.join(CASES)}.")] = ",".join(BAR_CASES),
    seeds: Annotated[str, typer.Option(help="Seeds, e.g. 0,1,2 or 3-14.")] = "0-2",
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", help="A delay option as for `schedmate replay -o KEY=VALUE` (repeatable).")] = None,
    annotators: Annotated[str, typer.Option(help="Comma-separated annotators.")] = ",".join(ANNOTATORS),
    json_out: Annotated[Path | None, typer.Option("--json", help="Also append one JSON row per replay here.")]
    = None,
) -> None:
    """Delay against `consolidate-rack` on the issue-16 bar's cells (or other cases), over seeds."""
    names = tuple(c.strip() for c in cases.split(",") if c.strip())
    unknown = [n for n in names if n not in CASES]
    if unknown or not names:
        raise typer.BadParameter(f"--cases: unknown {unknown or names}; known: {', '.join(CASES)}")
    try:
        found = rows(names, parse_seeds(seeds), list(option or []),
                     tuple(a.strip() for a in annotators.split(",") if a.strip()))
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    if json_out is not None:
        with json_out.open("a") as f:
            f.writelines(json.dumps(r) + "\n" for r in found)
    typer.echo(table(found))


if __name__ == "__main__":
    typer.run(main)
