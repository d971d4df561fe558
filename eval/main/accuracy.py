"""Duration-prediction accuracy of the `schedmate` annotator, at submission and at 25 % progress.

    .venv/bin/python -m eval.main.accuracy [--jobs 600] [--llm]

Replays each main-table trace once (FIFO) with the semantic annotator, then compares, for every job
that ran, the predicted total run time with the run time it actually had: at submission (history +
code work estimate) and at the first look at its log after 25 % of its run (log-monitor progress; a
job that ended before such a look counts as a miss). Yardsticks as in the issue: share of jobs within
25 % / 50 % / 2x, over all jobs and by how the job ended (`ran as configured`, `stopped early`: a
completed job that stopped before its configured steps, `failed or cancelled`), from the augmentation's
plans, which the annotator never reads; and calibration: the share of actual run times below the
predicted p10 / p50 / p90. Writes accuracy.csv, predictions.csv (one row per job) and accuracy_cdf.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from eval.main.run import available_traces
from schedmate.annotators.semantic import SemanticAnnotator
from schedmate.history.predictor import calibration
from schedmate.records import DurationEstimate
from schedmate.replay import replay
from schedmate.semantic.augment import load_plan, plan_path
from schedmate.sweep.cell import auto_monitor_interval, paced_jobs


def shares(pred: list[float | None], truth: list[float]) -> dict[str, float]:
    n = len(truth)
    def within(f) -> float:
        return sum(1 for p, t in zip(pred, truth) if p is not None and t > 0 and f(p / t)) / max(1, n)
    return {"jobs": n, "within_25pct": within(lambda r: abs(r - 1) <= 0.25),
            "within_50pct": within(lambda r: abs(r - 1) <= 0.5), "within_2x": within(lambda r: 0.5 <= r <= 2.0),
            "coverage": sum(p is not None for p in pred) / max(1, n)}


def calibration_shares(part: pd.DataFrame, col: str, truth: list[float]) -> dict[str, float]:
    """Share of actual run times below the predicted p10 / p50 / p90 (ideal 0.1 / 0.5 / 0.9)."""
    ests = [None if pd.isna(a) else DurationEstimate(p10=b, p50=a, p90=c)
            for a, b, c in zip(part[col], part[col + "_p10"], part[col + "_p90"], strict=True)]
    cal = calibration(ests, truth)
    return {k: cal[k] for k in ("below_p10", "below_p50", "below_p90")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=600)
    ap.add_argument("--llm", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("eval/main/results_accuracy"))
    a = ap.parse_args()
    rows, per_job = [], []
    for src in available_traces(a.jobs):
        name, cluster, jobs = src.label, src.cluster or "64", paced_jobs(src)
        interval = auto_monitor_interval(jobs)
        ann = SemanticAnnotator(use_llm=a.llm)
        sem = a.out / "semantic" / name
        r = replay(jobs, policy="fifo", annotator=ann, cluster=cluster, network="congested",
                   semantic=sem, monitor_interval_s=interval)
        ran = r.jobs[r.jobs["run_s"] > 0].set_index("job_id")["run_s"]
        for jid, run in ran.items():
            hist = ann.predictions.get(jid, [])
            later = [est for e, est in hist if e >= 0.25 * run]
            first = hist[0][1] if hist and hist[0][0] == 0.0 else None
            plan = load_plan(plan_path(sem, jid))
            how = ("ran as configured" if plan.outcome == "completed" and not plan.early_stop else
                   "stopped early" if plan.outcome == "completed" else "failed or cancelled")
            per_job.append({"trace": name, "job_id": jid, "ended": how, "actual_run_s": run,
                            "at_submission": first.p50 if first else None,
                            "at_submission_p10": first.p10 if first else None,
                            "at_submission_p90": first.p90 if first else None,
                            "at_25pct": later[0].p50 if later else None,
                            "at_25pct_p10": later[0].p10 if later else None,
                            "at_25pct_p90": later[0].p90 if later else None})
    df = pd.DataFrame(per_job)
    for (name, how), part in [((n, "all jobs"), g) for n, g in df.groupby("trace", sort=False)] + list(
            df.groupby(["trace", "ended"], sort=False)):
        for when, col in (("submission", "at_submission"), ("25% progress", "at_25pct")):
            pred = [None if pd.isna(v) else v for v in part[col]]
            truth = list(part["actual_run_s"])
            rows.append({"trace": name, "jobs_ended": how, "when": when, **shares(pred, truth),
                         **calibration_shares(part, col, truth)})
    table = pd.DataFrame(rows).sort_values(["trace", "jobs_ended", "when"], kind="stable")
    a.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(a.out / "accuracy.csv", index=False)
    df.to_csv(a.out / "predictions.csv", index=False)
    from eval.main.plots import plot_accuracy

    plot_accuracy(a.out)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
