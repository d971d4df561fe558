"""What every trace loader shares: the job-list columns, column access, building jobs from validated columns, duplicates, and the generic CSV loader."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedmate.jobtable import InvalidRow, JobTable
from schedmate.records import Job, Outcome
from schedmate.traces.base import (
    MAX_DURATION_S,
    LoadedTrace,
    OnError,
    RowError,
    TraceFormatError,
    Validator,
    opt,
    read_csv_strings,
    sort_jobs,
)
from schedmate.workloads import CATALOGUE, workload_for_name


@cache
def _workload(name: str | None) -> tuple[str | None, float]:
    """(catalogue class, spread slowdown) for a model-ish name, or (None, 1.0)."""
    w = workload_for_name(name) if name else None
    return (w, CATALOGUE[w].spread_slowdown) if w else (None, 1.0)


_REQUIRED = ("id", "submit_time", "num_gpus", "duration_s")


def _column(values: Any, good: np.ndarray, field: str) -> np.ndarray:
    """The good rows of one column as a NumPy array: floats (NaN where missing), or objects (None where
    missing: NaN or empty string); `num_nodes` below 1 counts as missing (0)."""
    a = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    a = a[good]
    if a.dtype.kind in "fiub":
        a = a.astype(np.float64)
        if field == "num_nodes":
            return np.where(np.isfinite(a) & (a >= 1), a, 0).astype(np.int32)
        return a
    out = a.astype(object)
    missing = pd.isna(out) | (out == "")
    out[missing] = None
    return out


def _build(file: str, v: Validator, cols: dict[str, Any], *, workload_names: Any = None,
           failure: Any = None) -> JobTable:
    """A `JobTable` of the rows `v` left good. `cols` maps Job fields to per-row arrays.

    A value our checks let through that a `Job` would still reject (a missing required value, a
    negative time) gets a TraceFormatError naming its row."""
    good = np.flatnonzero(~v.bad)
    data = {k: _column(c, good, k) for k, c in cols.items()}

    def reject(i: int, field: str, message: str) -> TraceFormatError:
        return TraceFormatError(RowError(file=file, line=int(v.lines[good[i]]), field=field,
                                         message=f"invalid job: {message}"))

    for f in _REQUIRED:
        col = data.get(f)
        missing = np.zeros(len(good), bool) if col is None else (
            ~np.isfinite(col) if col.dtype.kind == "f" else np.array([x is None for x in col], dtype=bool))
        if col is None or missing.any():
            raise reject(int(np.argmax(missing)) if col is not None else 0, f, "missing value")
    data["num_gpus"] = data["num_gpus"].astype(np.int64)  # loaders check integers where the format needs them
    for f in ("requested_time_s", "hang_onset_s", "spread_slowdown"):
        if f in data and data[f].dtype.kind != "f":
            data[f] = np.array([np.nan if x is None else float(x) for x in data[f]])
    if "outcome" in data:
        data["outcome"] = [o if o is not None else Outcome.completed for o in data["outcome"]]
    if workload_names is not None:
        names = _column(workload_names, good, "workload")
        pairs = [_workload(n) for n in names]
        data["workload"] = [p[0] for p in pairs]
        data["spread_slowdown"] = [p[1] for p in pairs]
    if failure is not None:
        data["failure_category"] = _column(failure, good, "failure_category")
    try:
        return JobTable.from_columns(len(good), data)
    except InvalidRow as e:
        raise reject(e.row, e.field, str(e).split(": ", 1)[1]) from e


def _duplicates(v: Validator, ids: pd.Series, field: str) -> None:
    dup = ids.duplicated(keep="first").to_numpy() & (ids.to_numpy() != "")
    v.flag(dup, field, lambda i: f"duplicate id {ids.iat[i]!r}")


def _trace(jobs: JobTable | list[Job], errors: list[RowError], path: Path, fmt: str, **stats: Any) -> LoadedTrace:
    errors = sorted(errors, key=lambda e: (e.file, e.line))
    stats.setdefault("rows_bad", len(errors))
    stats["jobs"] = len(jobs)
    if isinstance(jobs, JobTable):
        return LoadedTrace(table=jobs.sorted(), errors=errors, source=str(path), fmt=fmt, stats=stats)
    return LoadedTrace(jobs=sort_jobs(jobs), errors=errors, source=str(path), fmt=fmt, stats=stats)


class CsvLoader:
    """Plain CSV: `id,user,submit_time,num_gpus,duration_s` then any of the optional columns
    `outcome,num_nodes,name,job_type,vc,workload,requested_time_s,gpu_type`. Times in seconds.
    `workload` must be a catalogue class (its spread slowdown is set from the catalogue)."""

    name = "csv"
    description = "plain CSV, header id,user,submit_time,num_gpus,duration_s[,outcome,num_nodes,...]"
    REQUIRED = ("id", "user", "submit_time", "num_gpus", "duration_s")

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace:
        on_error: OnError = opt(options, "on_error", "fail")
        df, parse_errors = read_csv_strings(path)
        v = Validator(df, str(path), parse_errors)
        v.require_columns(self.REQUIRED)
        ids = v.strings("id", required=True)
        _duplicates(v, ids, "id")
        submit = v.number("submit_time", ge=0)
        gpus = v.number("num_gpus", ge=0, integer=True, what="an integer")
        dur = v.number("duration_s", ge=0, le=MAX_DURATION_S, le_why="seconds is over a year")
        cols: dict[str, Any] = {"id": ids, "user": v.strings("user"), "submit_time": submit,
                                "num_gpus": gpus, "duration_s": dur}
        if "outcome" in df:
            outc = {o.value: o for o in Outcome} | {"": Outcome.completed}
            cols["outcome"] = v.enum("outcome", outc, normalise=str.lower, required=False)
        if "num_nodes" in df:
            cols["num_nodes"] = v.number("num_nodes", required=False, ge=1, integer=True, what="an integer")
        for c in ("name", "job_type", "vc", "gpu_type"):
            if c in df:
                cols[c] = v.strings(c)
        if "requested_time_s" in df:
            cols["requested_time_s"] = v.number("requested_time_s", required=False, ge=0)
        wl = None
        if "workload" in df:
            wl = v.enum("workload", {k: k for k in CATALOGUE} | {"": ""}, normalise=str.lower, required=False)
        mask = v.finish(on_error)
        jobs = _build(str(path), v, cols, workload_names=wl)
        return _trace(jobs, v.errors, path, self.name, rows=len(df), rows_good=int(mask.sum()))
