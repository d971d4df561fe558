"""The main table: each policy with each annotator, on real-derived and synthetic traces.

    .venv/bin/python -m eval.main.run --out eval/main/results [--jobs 600] [--no-llm] [--semantic-noise 1]
        [--workers 2] [--backend auto|ray|pool|serial] [--address RAY_CLUSTER]

The table is a sweep (`schedmate.sweep`): one cell per (trace, policy, annotator), run as Ray tasks (or a
local process pool), stored in `OUT/sweep/` as they finish, so an interrupted run resumes where it
stopped when started again. The same grid is `eval/main/grid.yaml` for `schedmate sweep` (regenerate it
with `--write-grid eval/main/grid.yaml`). Every cell gives its trace's jobs their semantic material
(`schedmate.semantic.augment`, seeded: the same for every cell of a trace) in its own scratch directory,
and every (policy, annotator) pair replays the same augmented jobs on the same cluster, so the only
difference is what the scheduler knows. Annotators: `none` (metadata only), `lastk`, `helios`,
`lucid`, `history` (published-style predictors), `schedmate` (code analyzer + history + log monitor,
through the local LLM when one is served; `--no-llm` for the static and rule paths alone; its LLM cells
share the one server, `--llm-workers` at a time) and `oracle` (perfect knowledge). Writes results.csv,
results.md (from the sweep's table) and one plot per trace (main_<trace>.png: average JCT, p99 JCT,
queueing delay, failed GPU-hours); prints the ratios to `none`.

Traces (each loaded to roughly the cluster's capacity so that scheduling matters):
* philly: `derived:philly` (real Philly arrivals, GPU counts and durations), arrivals compressed.
* alibaba2023: the real openb pod list (real failures), a window of consecutive pods, arrivals compressed.
* helios: `synth:helios` (calibrated synthetic, Helios Venus-like).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

from schedmate.sweep import SweepGrid, TraceSource, run_sweep
from schedmate.traces import shared_traces_dir

POLICIES = ("fifo", "sjf", "qssf", "tiresias", "delay")
ANNOTATORS = ("none", "lastk", "helios", "lucid", "history", "schedmate", "oracle")
ALIBABA_PODS = "alibaba-gpu-v2023/csv/openb_pod_list_default.csv"


def traces(n: int) -> list[TraceSource]:
    """The main table's traces at `n` jobs, each with its cluster; log looks every ~1/20 of the median
    job, and not more often than every 5 minutes (`monitor_interval_s: auto`)."""
    return [
        TraceSource(name="philly", spec=f"derived:philly:{n}:0:0.6", cluster="256", monitor_interval_s="auto"),
        TraceSource(name="alibaba2023", spec=f"@shared/{ALIBABA_PODS}", min_gpus=1, skip=3000, take=n,
                    compress=40.0, cluster="32", monitor_interval_s="auto"),
        TraceSource(name="helios", spec=f"synth:helios:{n}:3", compress=1.2, cluster="256", monitor_interval_s="auto"),
    ]


def available_traces(n: int, names: list[str] | None = None) -> list[TraceSource]:
    """`traces(n)` (those named in `names`, default all), less alibaba2023 when its pod list is absent."""
    return [t for t in traces(n) if (names is None or t.name in names)
            and (t.name != "alibaba2023" or (shared_traces_dir() / ALIBABA_PODS).exists())]


def grid(n: int = 600, no_llm: bool = False, policies: list[str] | None = None,
         annotators: list[str] | None = None, names: list[str] | None = None,
         semantic_noise: float = 0.0) -> SweepGrid:
    """The main table as a sweep grid: every (trace, policy, annotator) on the trace's cluster, the
    `congested` network, seed 0, every cell with the semantic augmentation (in its own scratch directory)
    so that the only difference between annotators is what the scheduler knows."""
    chosen = [t for t in traces(n) if names is None or t.name in names]
    return SweepGrid(traces=chosen, policies=list(policies or POLICIES), annotators=list(annotators or ANNOTATORS),
                     annotator_options={"schedmate": {"use_llm": False}} if no_llm else {},
                     networks=["congested"], seeds=[0], semantic=True, semantic_noise=semantic_noise)


def grid_yaml(g: SweepGrid) -> str:
    return yaml.safe_dump(g.model_dump(mode="json", exclude_unset=True), sort_keys=False)


def table(sweep: pd.DataFrame) -> pd.DataFrame:
    """The main table's columns from the sweep's rows (hours, per-job annotation costs, ratios)."""
    def col(name: str) -> pd.Series:
        return sweep[name] if name in sweep.columns else pd.Series([None] * len(sweep), index=sweep.index)

    df = pd.DataFrame({
        "trace": sweep["trace"], "policy": sweep["policy"], "annotator": sweep["annotator"], "jobs": sweep["jobs"],
        "avg_jct_h": sweep["avg_jct_s"] / 3600, "p99_jct_h": sweep["p99_jct_s"] / 3600,
        "avg_queue_h": sweep["avg_queue_s"] / 3600, "failed_gpu_h": sweep["failed_gpu_hours"],
        "makespan_h": sweep["makespan_s"] / 3600,
        "llm_calls_per_job": col("annotation_llm_calls_per_job"), "tokens_per_job": col("annotation_tokens_per_job"),
        "annotate_s_per_job": col("annotation_annotate_s_per_job"), "wall_s": sweep["cell_wall_s"],
    }).reset_index(drop=True)
    base = df[df.annotator == "none"].set_index(["trace", "policy"])["avg_jct_h"]
    df["speedup_vs_none"] = [base.get((r.trace, r.policy), math.nan) / r.avg_jct_h for r in df.itertuples()]
    orc = df[df.annotator == "oracle"].set_index(["trace", "policy"])["avg_jct_h"]
    df["vs_oracle"] = [r.avg_jct_h / orc.get((r.trace, r.policy), math.nan) for r in df.itertuples()]
    return df


def markdown(df: pd.DataFrame) -> str:
    def cell(v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("eval/main/results"))
    ap.add_argument("--jobs", type=int, default=600)
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--policies", nargs="*", default=list(POLICIES))
    ap.add_argument("--annotators", nargs="*", default=list(ANNOTATORS))
    ap.add_argument("--traces", nargs="*", default=None)
    ap.add_argument("--semantic-noise", type=float, default=0.0,
                    help="scale of the real-cluster noise in the semantic augmentation (0 none, 1 calibrated)")
    ap.add_argument("--workers", type=int, default=2, help="cells replayed at once")
    ap.add_argument("--backend", default="auto", help="auto (Ray if installed, else pool) | ray | pool | serial")
    ap.add_argument("--address", default=None, help="an existing Ray cluster")
    ap.add_argument("--llm-workers", type=int, default=1, help="LLM cells (annotator schedmate) at once")
    ap.add_argument("--retry-failed", action="store_true")
    ap.add_argument("--write-grid", type=Path, default=None, help="write the grid as YAML to this file and exit")
    a = ap.parse_args()
    names = a.traces if a.write_grid else [t.label for t in available_traces(a.jobs, a.traces)]
    g = grid(a.jobs, a.no_llm, a.policies, a.annotators, names, a.semantic_noise)
    if a.write_grid:
        a.write_grid.write_text(
            f"# The main table (python -m eval.main.run --write-grid {a.write_grid} --jobs {a.jobs}"
            f"{' --no-llm' if a.no_llm else ''}).\n# Run: schedmate sweep {a.write_grid} --out runs/main "
            "[--annotator-option schedmate.use_llm=false]\n" + grid_yaml(g))
        return
    a.out.mkdir(parents=True, exist_ok=True)
    report = run_sweep(g, a.out / "sweep", workers=a.workers, backend=a.backend, address=a.address,
                       retry_failed=a.retry_failed, llm_workers=a.llm_workers)
    print(f"sweep: {report.cells} cells, {report.already_done} already done, {report.ok} ran ok, "
          f"{report.failed} failed, on {report.backend} in {report.wall_s:.0f} s ({a.out / 'sweep'})")
    sweep = report.table()
    bad = sweep[sweep["status"] != "ok"]
    for r in bad.itertuples():
        print(f"failed: {r.trace} {r.policy} {r.annotator}: {r.error}", file=sys.stderr)
    df = table(sweep[sweep["status"] == "ok"])
    df.to_csv(a.out / "results.csv", index=False)
    show = df[["trace", "policy", "annotator", "avg_jct_h", "p99_jct_h", "avg_queue_h", "failed_gpu_h",
               "speedup_vs_none", "vs_oracle", "llm_calls_per_job", "tokens_per_job",
               "annotate_s_per_job"]]
    (a.out / "results.md").write_text(
        f"Produced by `python -m eval.main.run --out {a.out} --jobs {a.jobs}{' --no-llm' if a.no_llm else ''}"
        f"{f' --semantic-noise {a.semantic_noise:g}' if a.semantic_noise else ''}` "
        f"on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (a sweep: {a.out / 'sweep' / 'results.parquet'}); "
        f"LLM server: {os.environ.get('SCHEDMATE_LLM_BASE_URL', 'recorded serve state')}\n\n"
        + markdown(show) + "\n")
    print(show.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    from eval.main.plots import plot_table

    for path in plot_table(a.out / "results.csv"):
        print(f"plot: {path}")
    if len(bad):
        sys.exit(1)


if __name__ == "__main__":
    main()
