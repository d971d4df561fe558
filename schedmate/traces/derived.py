"""`derived:philly:N[:seed[:compress]]`: a Philly-derived workload.

Arrivals, GPU counts, VCs and job types come from the 15 per-VC Gavel msr traces
(`philly-derived-gavel/seed=0/*.trace`, vc = file stem), merged and sorted by arrival (ties by
id `<vc>-<line>`); the first N jobs after `skip` are kept. Each job's duration is drawn (seeded,
with replacement) from the real Philly (duration, GPUs) pairs of
`philly/gavel_philly_job_distribution.derived.csv` that have the same GPU class; GPU counts not
in {1, 2, 4, 8} use the nearest class in log2 (ties go up: 3 -> 4, 6 -> 8, 16 -> 8). The job
keeps its real GPU count. workload from the Gavel job type via the catalogue; outcome completed.

`compress` divides every arrival time (default 1): the 125 days of Philly arrivals are far too
sparse for a small simulated cluster, e.g. compress=50 brings one VC-month into about half a day.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from schedmate.jobtable import JobTable
from schedmate.records import Job
from schedmate.traces.base import RowError, TraceFormatError, shared_traces_dir
from schedmate.traces.loaders import GAVEL_COLUMNS, _workload, gavel_base_type, gpu_class


def gavel_dir(shared: Path | None = None) -> Path:
    return (shared or shared_traces_dir()) / "philly-derived-gavel" / "seed=0"


def pairs_file(shared: Path | None = None) -> Path:
    return (shared or shared_traces_dir()) / "philly" / "gavel_philly_job_distribution.derived.csv"


def _need(p: Path) -> Path:
    if not p.exists():
        raise TraceFormatError(RowError(file=str(p), line=0, message=(
            "derived:philly needs the shared traces; set SCHEDMATE_SHARED_TRACES or place them at <repo>/../shared/traces")))
    return p


def merged_gavel_arrivals(shared: Path | None = None) -> pd.DataFrame:
    """All msr jobs: vc, line, id, job_type, arrival_time, scale_factor; sorted by (arrival, id) like `Job`s."""
    frames = []
    for f in sorted(_need(gavel_dir(shared)).glob("*.trace")):
        df = pd.read_csv(f, sep="\t", header=None, names=GAVEL_COLUMNS, usecols=["job_type", "arrival_time", "scale_factor"])
        df["vc"] = f.stem
        df["line"] = np.arange(1, len(df) + 1)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out["id"] = out["vc"] + "-" + out["line"].astype(str)
    return out.sort_values(["arrival_time", "id"], kind="stable").reset_index(drop=True)


def derived_philly(n: int, seed: int = 0, compress: float = 1.0, skip: int = 0,
                   shared: Path | None = None) -> tuple[list[Job], dict]:
    """The workload as `Job` records (see `derived_philly_table`)."""
    table, stats = derived_philly_table(n, seed, compress, skip, shared)
    return table.to_jobs(), stats


def derived_philly_table(n: int, seed: int = 0, compress: float = 1.0, skip: int = 0,
                         shared: Path | None = None) -> tuple[JobTable, dict]:
    if n < 0 or skip < 0:
        raise ValueError("N and skip must be >= 0")
    if compress <= 0:
        raise ValueError("compress must be > 0")
    arr = merged_gavel_arrivals(shared).iloc[skip: skip + n]
    pairs = pd.read_csv(_need(pairs_file(shared)))
    pools = {int(k): g["duration_s"].to_numpy(dtype=float) for k, g in pairs.groupby("num_gpus")}
    rng = np.random.default_rng([seed, 7151])
    gpus = arr["scale_factor"].to_numpy(dtype=int)
    classes = gpu_class(gpus) if len(gpus) else np.array([], dtype=int)
    dur = np.empty(len(arr))
    for cls in np.unique(classes):
        idx = np.flatnonzero(classes == cls)
        pool = pools[int(cls)]
        dur[idx] = pool[rng.integers(0, len(pool), size=len(idx))]
    t0 = float(arr["arrival_time"].iloc[0]) if len(arr) else 0.0
    names = arr["job_type"].tolist()
    base = [gavel_base_type(jt) for jt in names]
    kinds = [_workload(b) for b in base]
    table = JobTable.from_columns(len(arr), {
        "id": arr["id"].tolist(), "vc": arr["vc"].tolist(),
        "submit_time": [(float(a) - t0) / compress for a in arr["arrival_time"].tolist()],
        "num_gpus": gpus, "duration_s": dur, "name": names, "job_type": base,
        "workload": [w for w, _ in kinds], "spread_slowdown": [slow for _, slow in kinds]})
    stats = {"gpu_class": {int(c): int((classes == c).sum()) for c in np.unique(classes)}, "compress": compress,
             "skip": skip, "arrival_span_s": (table.submit_time.item(-1) if len(table) else 0.0)}
    return table, stats
