"""What every trace loader shares: the job-list columns, column access, building jobs from validated columns, duplicates, and the generic CSV loader."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import TypeAdapter, ValidationError

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


_JOB_LIST = TypeAdapter(list[Job])


_INT_FIELDS = {"num_gpus", "num_nodes"}


def _column(values: Any, good: np.ndarray, field: str) -> list[Any]:
    """Python values for the good rows, None where missing (NaN, empty string, num_nodes < 1)."""
    a = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    a = a[good]
    if a.dtype.kind == "f":
        ok = np.isfinite(a)
        if field == "num_nodes":
            ok &= a >= 1
        if field in _INT_FIELDS:
            out = np.where(ok, a, 0).astype(np.int64).astype(object)
        else:
            out = a.astype(object)
        out[~ok] = None
        return out.tolist()
    if a.dtype.kind in "iu":
        return a.tolist()
    out = a.astype(object)
    missing = pd.isna(out) | (out == "")
    out[missing] = None
    return out.tolist()


def _build(file: str, v: Validator, cols: dict[str, Any], *, workload_names: Any = None,
           failure: Any = None) -> list[Job]:
    """Construct `Job`s for the rows `v` left good. `cols` maps Job fields to per-row arrays.

    Built column-wise and validated by pydantic in one call (a list adapter), which is several
    times faster than constructing Jobs one by one; a value our checks let through still gets a
    TraceFormatError naming its row.
    """
    good = np.flatnonzero(~v.bad)
    data = {k: _column(c, good, k) for k, c in cols.items()}
    if "outcome" in data:
        data["outcome"] = [o if o is not None else Outcome.completed for o in data["outcome"]]
    if workload_names is not None:
        names = _column(workload_names, good, "workload")
        pairs = [_workload(n) for n in names]
        data["workload"] = [p[0] for p in pairs]
        data["spread_slowdown"] = [p[1] for p in pairs]
    if failure is not None:
        data["failure_category"] = _column(failure, good, "failure_category")
    keys = list(data)
    records = [dict(zip(keys, row)) for row in zip(*(data[k] for k in keys))]
    try:
        return _JOB_LIST.validate_python(records)
    except ValidationError as e:
        first = e.errors()[0]
        i = first["loc"][0] if first["loc"] and isinstance(first["loc"][0], int) else 0
        field = str(first["loc"][1]) if len(first["loc"]) > 1 else None
        raise TraceFormatError(RowError(file=file, line=int(v.lines[good[i]]) if len(good) else 0, field=field,
                                        message=f"invalid job: {first['msg']}")) from e


def _duplicates(v: Validator, ids: pd.Series, field: str) -> None:
    dup = ids.duplicated(keep="first").to_numpy() & (ids.to_numpy() != "")
    v.flag(dup, field, lambda i: f"duplicate id {ids.iat[i]!r}")


def _trace(jobs: list[Job], errors: list[RowError], path: Path, fmt: str, **stats: Any) -> LoadedTrace:
    errors = sorted(errors, key=lambda e: (e.file, e.line))
    stats.setdefault("rows_bad", len(errors))
    stats["jobs"] = len(jobs)
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
