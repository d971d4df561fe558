"""The semantic-noise knobs (`schedmate.semantic.noise.SemanticNoise`) derived from real data.

    python -m eval.realjobs.calibrate            # prints each derivation and the resulting SemanticNoise

Each knob from its own observations (eval/realjobs/calibration/README.md says where each comes from):

* `iter_time_total`: the pooled between-system sigma of log seconds per epoch in MLPerf training runs of one
  benchmark on one GPU family and count (groups with at least two systems; each system's runs reduced to
  their median, so run-to-run noise on one system, printed beside it, does not dilute the groups). The
  augmentation adds a log-normal factor only for what the plain U(0.8, 1.25) spread does not already give.
* `stop_early_share`: user cancellations among the jobs that did not fail, cancel / (complete + cancel),
  in the published summaries of seven clusters (median). Traces without a status (derived Philly) or that
  count a deleted pod as done (Alibaba openb) record those runs as completed; in the augmentation they are
  completed jobs that end before their configured length. The plain augmentation already stops
  EARLY_STOP_SHARE of completed jobs early on its own account, so the added share is what keeps that
  share for the runs that were not cancelled: added = (1 - EARLY_STOP_SHARE) x cancel share.
* `stop_early_fraction`: where committed logs of runs that stopped without an error end (step reached /
  configured total), a uniform range with the observations' mean and standard deviation.
* `no_length_share`: code-corpus jobs whose sources state neither a step count nor an epoch count.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from schedmate.semantic.noise import EARLY_STOP_SHARE, PLAIN_ITER_SIGMA, SemanticNoise
from schedmate.traces import shared_traces_dir

HERE = Path(__file__).resolve().parent
CALIBRATION = HERE / "calibration"
CODE_CORPUS = HERE / "code"
MIN_SYSTEMS = 2
"""A group (benchmark, GPU family, GPU count, MLPerf round) needs this many systems to say how jobs of one
model and GPU count differ."""


@dataclass
class Derivation:
    value: float | tuple[float, float]
    lines: list[str]


def iteration_dispersion(csv: Path = CALIBRATION / "mlperf_epochs.csv") -> Derivation:
    df = pd.read_csv(csv)
    df["round"] = df["source"].str.extract(r"training_results_(v[\d.]+)@", expand=False)
    df["x"] = df["median_epoch_s"].map(math.log)
    group = ["round", "benchmark", "gpu", "gpus"]
    per_system = df.groupby([*group, "submitter", "system"], as_index=False).agg(x=("x", "median"),
                                                                                 runs=("x", "size"))
    sizes = per_system.groupby(group)["system"].transform("size")
    kept = per_system[sizes >= MIN_SYSTEMS]
    ss = kept.groupby(group)["x"].apply(lambda s: float(((s - s.mean()) ** 2).sum())).sum()
    dof = int((kept.groupby(group).size() - 1).sum())
    sigma = math.sqrt(ss / dof)
    runs = df.merge(kept[[*group, "submitter", "system"]], on=[*group, "submitter", "system"])
    run_ss = runs.groupby([*group, "submitter", "system"])["x"].apply(lambda s: float(((s - s.mean()) ** 2).sum()))
    run_dof = int((runs.groupby([*group, "submitter", "system"]).size() - 1).sum())
    lines = [(f"groups (round, benchmark, GPU, GPUs) with >= {MIN_SYSTEMS} systems: "
             f"{kept.groupby(group).ngroups}, {len(kept)} systems, {int(kept['runs'].sum())} runs")]
    for key, g in kept.groupby(group):
        lines.append(f"  {' '.join(map(str, key))}: {len(g)} systems, sd of log s/epoch {g['x'].std(ddof=1):.3f}")
    lines.append(f"pooled between-system sigma of log seconds per epoch: {sigma:.3f} ({dof} degrees of freedom)")
    lines.append(f"run-to-run sigma on one system (same groups): {math.sqrt(run_ss.sum() / max(1, run_dof)):.4f}")
    lines.append(f"plain augmentation spread U(0.8, 1.25): sigma {PLAIN_ITER_SIGMA:.3f}; "
                 f"added at noise 1: {math.sqrt(max(0.0, sigma ** 2 - PLAIN_ITER_SIGMA ** 2)):.3f}, "
                 f"at noise 2: {math.sqrt(max(0.0, (2 * sigma) ** 2 - PLAIN_ITER_SIGMA ** 2)):.3f}")
    return Derivation(round(sigma, 3), lines)


def _summary_rows(traces: Path) -> list[tuple[str, float, float, str]]:
    """(cluster, complete, cancel, source) for GPU jobs."""
    rows = []
    helios = pd.read_csv(traces / "helios" / "helios_cluster_summary.csv")
    for r in helios[helios["id"] != "total"].itertuples():
        rows.append((str(r.id), float(r.complete_rate_gpu), float(r.cancel_rate_gpu), "helios/helios_cluster_summary.csv"))
    acme = pd.read_csv(traces / "acme" / "cluster_summary.csv")
    for r in acme[acme["id"].isin(["Seren", "Kalos", "Philly"])].itertuples():
        rows.append((str(r.id), float(r.complete_rate_gpu), float(r.cancel_rate_gpu), "acme/cluster_summary.csv"))
    return rows


def stop_share(traces: Path | None = None) -> Derivation:
    traces = traces or shared_traces_dir()
    rows = _summary_rows(traces)
    if not rows:
        raise FileNotFoundError(f"{traces}: no cluster summaries (set SCHEDMATE_SHARED_TRACES)")
    shares = [c / (p + c) for _, p, c, _ in rows]
    med = statistics.median(shares)
    lines = [f"  {name}: complete {p:.3f}, cancel {c:.3f} -> cancel / (complete + cancel) {c / (p + c):.3f}  ({src})"
             for name, p, c, src in rows]
    added = (1 - EARLY_STOP_SHARE) * med
    lines.append(f"median over {len(rows)} clusters: {med:.3f} (mean {statistics.mean(shares):.3f}); "
                 f"added share = (1 - {EARLY_STOP_SHARE}) x {med:.3f} = {added:.3f} "
                 f"(completed jobs ending early: {EARLY_STOP_SHARE:.2f} -> {EARLY_STOP_SHARE + added:.3f})")
    return Derivation(round(added, 3), lines)


def stop_fraction(csv: Path = CALIBRATION / "stopped_runs.csv") -> Derivation:
    df = pd.read_csv(csv)
    df["fraction"] = df["current"] / df["total"]
    ended = df[df["ended"].isin(["stopped", "early_stopping"])]
    f = ended["fraction"].tolist()
    if len(f) < 2:
        raise ValueError(f"{csv}: fewer than two stopped runs")
    m, sd = statistics.mean(f), statistics.stdev(f)
    lo, hi = max(0.05, m - math.sqrt(3) * sd), min(0.95, m + math.sqrt(3) * sd)
    non_failed = df[df["ended"] != "time_limit"]
    lines = [(f"whole committed logs that ended without an error: {len(non_failed)}; ran their configured length: "
             f"{int((non_failed['ended'] == 'full').sum())}; stopped before it: {len(f)} "
             f"({len(f) / len(non_failed):.0%}); timed out (not counted): {int((df['ended'] == 'time_limit').sum())}"),
             "stopped at " + ", ".join(f"{x:.3f}" for x in f) + " of the configured length",
             f"uniform with their mean {m:.3f} and sd {sd:.3f}: ({lo:.2f}, {hi:.2f})"]
    return Derivation((round(lo, 2), round(hi, 2)), lines)


def no_length(code_dir: Path = CODE_CORPUS) -> Derivation:
    n = none = epochs_only = 0
    ids = []
    for shard in sorted(code_dir.glob("*.jsonl")):
        for line in shard.read_text().splitlines():
            if not line.strip():
                continue
            labels = json.loads(line)["labels"]
            n += 1
            if labels.get("train_steps") is None and labels.get("epochs") is None:
                none += 1
                ids.append(json.loads(line)["id"])
            elif labels.get("train_steps") is None:
                epochs_only += 1
    if n == 0:
        raise FileNotFoundError(f"{code_dir}: no code corpus shards")
    lines = [(f"code corpus: {n} jobs; neither steps nor epochs stated: {none} ({none / n:.1%}: {', '.join(ids)}); "
             f"epochs only (steps need the dataset size): {epochs_only} ({epochs_only / n:.1%})")]
    return Derivation(round(none / n, 3), lines)


def calibrate() -> tuple[SemanticNoise, list[str]]:
    it, share, frac, nolen = iteration_dispersion(), stop_share(), stop_fraction(), no_length()
    noise = SemanticNoise(iter_time_total=float(it.value), stop_early_share=float(share.value),  # type: ignore[arg-type]
                          stop_early_fraction=frac.value, no_length_share=float(nolen.value))  # type: ignore[arg-type]
    out = ["## iteration time between jobs of one model and GPU count (iter_time_total)", *it.lines,
           "## runs stopped before their configured length (stop_early_share)", *share.lines,
           "## where stopped runs end (stop_early_fraction)", *frac.lines,
           "## scripts that state no length (no_length_share)", *nolen.lines,
           f"=> {noise}"]
    return noise, out


def main() -> None:
    _, lines = calibrate()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
