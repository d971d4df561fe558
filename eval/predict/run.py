"""Duration-prediction accuracy of the history-based annotators, measured in trace replays.

    .venv/bin/python eval/predict/run.py                       # synth:helios:5000 and derived:philly:5000
    .venv/bin/python eval/predict/run.py --jobs 2000 --annotators lastk,helios --speed-jobs 0

For each trace and annotator: replay with FIFO on a big cluster (`--cluster 1024`, ideal network, so a
job's run time equals its trace duration), take the annotation each job got **at its submission**, and
compare its p50 with the job's true duration: the share within 25 % and 50 % (|p50 - d| <= x d), within
2x (d/2 <= p50 <= 2d), the median |log(p50/d)| (in 1+s), and the calibration of the quantiles (share of
durations below p10 / p50 / p90; ideal 0.10 / 0.50 / 0.90). Jobs without a prediction count as misses
in the accuracy shares; `coverage` says how many had one. `--speed-jobs N` also times a replay of
synth:helios:N per annotator. Writes `results/accuracy.csv`, `results/speed.csv` and `results/README.md`.

Default traces: `synth:helios:N` (calibrated synthetic; durations drawn independently of name, user and
GPUs, so nothing can beat the global distribution by much), `derived:philly:N:0:1` (Philly arrivals at
their real pace, real Philly durations drawn per GPU class: again independent of the name), the same
compressed 50x (`:0:50`: arrivals so dense that only short jobs have finished when most predictions are
made), the Gavel msr trace `philly-derived-gavel/seed=0` (first N jobs; durations from total steps and a
per-type rate, so names carry real signal) and the real Alibaba 2023 openb pod list (first N pods; real
durations; names are pod ids, `job_type` is the QoS class). The shared ones need ../shared/traces and are
skipped with a note if absent.
"""

from __future__ import annotations

import datetime as dt
import math
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer

from schedmate.annotators import ANNOTATORS, Annotator
from schedmate.history.predictor import calibration
from schedmate.replay import replay
from schedmate.traces import load_trace
from schedmate.traces.base import shared_traces_dir

HERE = Path(__file__).parent
DEFAULT_ANNOTATORS = "history,history-hashed,helios,lucid,lastk,requested"


def make_annotator(spec: str) -> Annotator:
    """Registry name, or `history-hashed` / `history-chroma` for the history annotator's other backends."""
    if spec == "history-hashed":
        return ANNOTATORS.create("history", embedder="hashed")
    if spec == "history-chroma":
        import tempfile

        return ANNOTATORS.create("history", store="chroma", store_options={"path": tempfile.mkdtemp(prefix="hist-")})
    return ANNOTATORS.create(spec)


def score(preds: list[Any], truth: np.ndarray) -> dict[str, float]:
    p50 = np.array([p.p50 if p is not None else np.nan for p in preds])
    has = ~np.isnan(p50)
    pos = truth > 0
    err = np.abs(p50 - truth)
    out: dict[str, float] = {"jobs": float(len(truth))}
    with np.errstate(invalid="ignore"):
        out["within_25pct"] = float(np.mean(has & pos & (err <= 0.25 * truth)))
        out["within_50pct"] = float(np.mean(has & pos & (err <= 0.50 * truth)))
        out["within_2x"] = float(np.mean(has & (p50 >= truth / 2) & (p50 <= 2 * truth)))
        out["median_abs_log_err"] = float(np.median(np.abs(np.log1p(p50[has]) - np.log1p(truth[has])))) if has.any() \
            else math.nan
    cal = calibration(list(preds), truth.tolist())
    out.update(cal)
    return out


def run_one(trace: list, spec: str, cluster: str) -> tuple[dict[str, float], float]:
    ann = make_annotator(spec)
    t0 = time.perf_counter()
    r = replay(trace, policy="fifo", annotator=ann, cluster=cluster, network="ideal")
    wall = time.perf_counter() - t0
    preds = [js.annotation.predicted_duration for js in r.sim.jobs]
    truth = np.array([js.job.duration_s for js in r.sim.jobs])
    return score(preds, truth), wall


def main(
    jobs: Annotated[int, typer.Option(help="Jobs per trace.")] = 5000,
    traces: Annotated[str, typer.Option(help="Comma-separated trace specs; {n} -> --jobs, {shared} -> the shared traces folder.")] =
        "synth:helios:{n},derived:philly:{n}:0:1,derived:philly:{n}:0:50,"
        "{shared}/philly-derived-gavel/seed=0,{shared}/alibaba-gpu-v2023/csv/openb_pod_list_default.csv",
    annotators: Annotated[str, typer.Option(help="Comma-separated annotators.")] = DEFAULT_ANNOTATORS,
    cluster: Annotated[str, typer.Option(help="Cluster spec (big enough that nothing queues for long).")] = "1024",
    speed_jobs: Annotated[int, typer.Option(help="Also time a replay of synth:helios:N per annotator (0: no).")] = 10000,
    out: Annotated[Path, typer.Option(help="Output directory.")] = HERE / "results",
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    names = [a.strip() for a in annotators.split(",") if a.strip()]
    rows, notes = [], []
    shared = shared_traces_dir()
    for spec in [t.strip().format(n=jobs, shared=shared) for t in traces.split(",") if t.strip()]:
        try:
            trace = load_trace(spec, limit=jobs).jobs
        except (FileNotFoundError, ValueError) as e:
            notes.append(f"{spec}: skipped ({e})")
            print(f"skip {spec}: {e}", file=sys.stderr)
            continue
        for name in names:
            m, wall = run_one(trace, name, cluster)
            rows.append({"trace": spec.replace(str(shared), "<shared>"), "annotator": name, **m, "replay_wall_s": wall})
            print(f"{spec:28s} {name:15s} within2x={m['within_2x']:.3f} cov={m['coverage']:.2f} "
                  f"wall={wall:.1f}s", file=sys.stderr)
    acc = pd.DataFrame(rows)
    acc.to_csv(out / "accuracy.csv", index=False)
    speed = pd.DataFrame()
    if speed_jobs:
        trace = load_trace(f"synth:helios:{speed_jobs}").jobs
        srows = []
        for name in ["none", *names]:
            _, wall = run_one(trace, name, cluster)
            srows.append({"trace": f"synth:helios:{speed_jobs}", "annotator": name, "replay_wall_s": wall})
            print(f"speed {name:15s} {wall:.1f}s", file=sys.stderr)
        speed = pd.DataFrame(srows)
        speed.to_csv(out / "speed.csv", index=False)
    write_markdown(out / "README.md", acc, speed, notes, " ".join(sys.argv))


def write_markdown(path: Path, acc: pd.DataFrame, speed: pd.DataFrame, notes: list[str], command: str) -> None:
    lines = [
        "# Duration prediction at submission: measured accuracy",
        "",
        (f"Produced by `.venv/bin/python eval/predict/run.py` ({command!r}) on "
         f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC. FIFO, 1024 GPUs, ideal network; the "
         "annotation each job got at submission against its true duration. Shares are over all jobs "
         "(no prediction = miss); calibration columns are the share of durations below each quantile "
         "(ideal 0.10 / 0.50 / 0.90) over jobs with a prediction. `history` embeds with MiniLM, "
         "`history-hashed` with the hashed bag of words; its first replay in a process includes loading "
         "the model."),
        "",
        ("What the traces can teach (facts about how they are made, see traces/README.md): `synth:helios` "
        "draws durations independently of name, user and GPUs, so no predictor can do much better than the "
        "global distribution; `derived:philly` draws real Philly durations per GPU class (the name carries "
        "nothing, the GPU count a little), no users; with `:0:50` arrivals are so dense that mostly short jobs "
        "have finished when predictions are made (censoring: p50 too low); the Gavel msr trace derives "
        "durations from steps and a per-type rate (names carry signal), no users; openb is real Alibaba data "
        "whose names are pod ids (`job_type` = QoS), no users. No trace has requested times, so `requested` "
        "has no coverage; no trace has code profiles, so the work-estimate path is not measured here."),
        "",
    ]
    if not acc.empty:
        cols = ["trace", "annotator", "coverage", "within_25pct", "within_50pct", "within_2x", "median_abs_log_err",
                "below_p10", "below_p50", "below_p90", "replay_wall_s"]
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in acc[cols].itertuples(index=False):
            lines.append("| " + " | ".join(v if isinstance(v, str) else f"{v:.3f}" for v in r) + " |")
        lines.append("")
    if not speed.empty:
        lines += ["## Replay wall time (2 shared cores)", "", "| trace | annotator | wall (s) |", "|---|---|---|"]
        lines += [f"| {r.trace} | {r.annotator} | {r.replay_wall_s:.1f} |" for r in speed.itertuples(index=False)]
        lines.append("")
    lines += [f"- {n}" for n in notes]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    typer.run(main)
