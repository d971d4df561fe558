"""File loaders, one per trace format, registered in `LOADERS` (name -> loader object).

Every loader validates each row (types, non-negative times, end >= start, GPUs >= 0, known
enums) and reports bad rows as `RowError(file, line, field, message)`; mapping decisions are
documented in `traces/README.md` and on each class.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping
from datetime import datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from pydantic import TypeAdapter, ValidationError

from schedmate.records import FailureCategory, Job, Outcome
from schedmate.traces.base import (
    MAX_DURATION_S,
    TRACES_DIR,
    LoadedTrace,
    OnError,
    RowError,
    TraceFormatError,
    Validator,
    csv_header,
    opt,
    raise_or_collect,
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


# --------------------------------------------------------------------------- plain csv


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


# --------------------------------------------------------------------------- helios / acme


_SLURM_STATES: dict[str, tuple[Outcome, FailureCategory | None]] = {
    "COMPLETED": (Outcome.completed, None),
    "CANCELLED": (Outcome.cancelled, None),
    "FAILED": (Outcome.failed, None),
    "TIMEOUT": (Outcome.timeout, None),
    "NODE_FAIL": (Outcome.failed, FailureCategory.node),
    "OUT_OF_MEMORY": (Outcome.failed, FailureCategory.oom),
    "PREEMPTED": (Outcome.failed, FailureCategory.preempted),
}


def _slurm_state(s: str) -> str:
    s = s.strip().upper().replace(" ", "_")
    return "CANCELLED" if s.startswith("CANCELLED") or s == "CANCELED" else s


class _SlurmLoader:
    """Shared by Helios and Acme (both Slurm exports with datetime strings)."""

    name = ""
    description = ""
    REQUIRED: tuple[str, ...] = ()
    TIME_FMT = "%Y-%m-%d %H:%M:%S"

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace:
        on_error: OnError = opt(options, "on_error", "fail")
        gpu_only = bool(opt(options, "gpu_only", False))
        fmt = str(opt(options, "time_format", self.TIME_FMT))
        df, parse_errors = read_csv_strings(path)
        v = Validator(df, str(path), parse_errors)
        v.require_columns(self.REQUIRED)
        ids = v.strings("job_id", required=True)
        _duplicates(v, ids, "job_id")
        gpus = v.number("gpu_num", ge=0, integer=True, what="an integer")
        nodes = v.number("node_num", required=False, ge=0, integer=True, what="an integer")
        if "cpu_num" in df:
            v.number("cpu_num", required=False, ge=0)
        state = v.enum("state", {k: k for k in _SLURM_STATES}, normalise=_slurm_state)
        submit = v.timestamp("submit_time", fmt=fmt)
        start = v.timestamp("start_time", fmt=fmt, required=False)
        end = v.timestamp("end_time", fmt=fmt, required=False)
        v.order(submit, start, "start_time", "start_time is before submit_time")
        v.order(start, end, "end_time", "end_time is before start_time")
        dur = (v.number("duration", required=False, ge=0, le=MAX_DURATION_S, le_why="seconds is over a year")
               if "duration" in df else end - start)
        if "duration" not in df:
            with np.errstate(invalid="ignore"):
                v.flag(np.isfinite(dur) & (dur > MAX_DURATION_S), "end_time", "implausible: the job runs over a year")
        if "queue" in df:
            v.number("queue", required=False, ge=0)
        with np.errstate(invalid="ignore"):
            dur = np.where(np.isfinite(dur), dur, end - start)
        # a job with neither a duration nor start/end never ran: duration 0 (documented)
        dur = np.where(np.isfinite(dur), dur, 0.0)
        extra = self.extra_columns(v, df)
        mask = v.finish(on_error)
        origin = float(np.nanmin(submit[mask])) if mask.any() else 0.0
        outcome = state.map(lambda s: _SLURM_STATES[s][0] if s in _SLURM_STATES else None)
        failure = state.map(lambda s: _SLURM_STATES[s][1] if s in _SLURM_STATES else None)
        cols: dict[str, Any] = {
            "id": ids, "user": v.strings("user"), "submit_time": submit - origin, "num_gpus": gpus,
            "num_nodes": nodes, "duration_s": dur, "outcome": outcome,
        }
        cols.update(extra)
        jobs = _build(str(path), v, cols, workload_names=self.workload_names(v, df), failure=failure)
        dropped_cpu = 0
        if gpu_only:
            before = len(jobs)
            jobs = [j for j in jobs if j.num_gpus > 0]
            dropped_cpu = before - len(jobs)
        return _trace(jobs, v.errors, path, self.name, rows=len(df), rows_good=int(mask.sum()),
                      time_origin=pd.Timestamp(origin, unit="s").isoformat(), cpu_jobs_dropped=dropped_cpu)

    def extra_columns(self, v: Validator, df: pd.DataFrame) -> dict[str, Any]:
        return {}

    def workload_names(self, v: Validator, df: pd.DataFrame) -> Any:
        return None


class HeliosLoader(_SlurmLoader):
    """SenseTime Helios `cluster_log.csv`. state COMPLETED/CANCELLED/FAILED/TIMEOUT/NODE_FAIL
    (NODE_FAIL -> failed with failure_category node); times relative to the first submit."""

    name = "helios"
    description = "Helios <cluster>/cluster_log.csv (Slurm export, datetime strings)"
    REQUIRED = ("job_id", "user", "vc", "gpu_num", "node_num", "state", "submit_time", "start_time",
                "end_time", "duration")

    def extra_columns(self, v: Validator, df: pd.DataFrame) -> dict[str, Any]:
        return {"vc": v.strings("vc")}


_ACME_TYPES = {"eval": "Eval", "pretrain": "Pretrain", "sft": "SFT", "mllm": "MLLM", "debug": "Debug",
               "other": "Other"}


class AcmeLoader(_SlurmLoader):
    """Acme `trace_seren.csv` / `trace_kalos.csv`. `type` (Eval/Pretrain/SFT/MLLM/Debug/Other, any
    case) -> job_type; Pretrain names a model class (gpt) through the catalogue, the others do not."""

    name = "acme"
    description = "Acme trace_seren.csv / trace_kalos.csv"
    REQUIRED = ("job_id", "user", "node_num", "gpu_num", "type", "state", "submit_time", "start_time",
                "end_time", "duration")

    def extra_columns(self, v: Validator, df: pd.DataFrame) -> dict[str, Any]:
        self._types = v.enum("type", _ACME_TYPES, normalise=str.lower)
        return {"job_type": self._types, "vc": pd.Series(["kalos" if "kalos" in v.file.lower() else "seren"]
                                                          * len(df))}

    def workload_names(self, v: Validator, df: pd.DataFrame) -> Any:
        return self._types


# --------------------------------------------------------------------------- philly


_PHILLY_STATUS = {"Pass": Outcome.completed, "Killed": Outcome.cancelled, "Failed": Outcome.failed}


def _iter_json_list(text: str, file: str):
    """Yield (line, object) for each element of a top-level JSON list, or of a JSON-lines file."""
    nl = [m.start() for m in re.finditer("\n", text)]

    def line_of(pos: int) -> int:
        return bisect.bisect_left(nl, pos) + 1

    dec = json.JSONDecoder()
    ws = re.compile(r"[ \t\r\n]*")
    pos = ws.match(text, 0).end()
    if pos < len(text) and text[pos] == "[":
        pos = ws.match(text, pos + 1).end()
        if pos < len(text) and text[pos] == "]":
            return
        while True:
            try:
                obj, end = dec.raw_decode(text, pos)
            except json.JSONDecodeError as e:
                raise TraceFormatError(RowError(file=file, line=e.lineno, field=None,
                                                message=f"invalid JSON: {e.msg} (column {e.colno})")) from None
            yield line_of(pos), obj
            pos = ws.match(text, end).end()
            if pos < len(text) and text[pos] == ",":
                pos = ws.match(text, pos + 1).end()
                continue
            if pos < len(text) and text[pos] == "]":
                return
            raise TraceFormatError(RowError(file=file, line=line_of(pos), field=None,
                                            message="invalid JSON: expected ',' or ']' between jobs"))
    else:  # JSON lines
        for n, raw in enumerate(text.splitlines(), start=1):
            if raw.strip():
                try:
                    yield n, json.loads(raw)
                except json.JSONDecodeError as e:
                    raise TraceFormatError(RowError(file=file, line=n, field=None,
                                                    message=f"invalid JSON: {e.msg}")) from None


_EPOCH = datetime(1970, 1, 1)


def _philly_time(v: Any) -> float | None:
    if v is None:
        return None
    if not isinstance(v, str) or len(v) != 19 or v[10] != " ":
        raise ValueError(f"not a time string: {v!r}")
    return (datetime.fromisoformat(v) - _EPOCH).total_seconds()  # strict "YYYY-MM-DD HH:MM:SS" by the check above


class PhillyLoader:
    """Philly `cluster_job_log` (a JSON list of jobs, or JSON lines).

    status Pass/Killed/Failed -> completed/cancelled/failed. GPUs and nodes come from the LAST
    attempt's `detail` (the placement the job ended on). duration = SUM over attempts of
    (end - start): the service the job consumed, including retries, which is what a replay must
    reproduce. A job whose last attempt has no `end_time` ran past the trace end: it is dropped
    and counted in stats['censored']; a job with no attempts never ran: dropped and counted in
    stats['never_started']. Times are relative to the first submitted_time.
    """

    name = "philly"
    description = "Philly cluster_job_log JSON (status, vc, jobid, user, submitted_time, attempts)"

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace:
        on_error: OnError = opt(options, "on_error", "fail")
        file = str(path)
        errors: list[RowError] = []
        rows: list[dict[str, Any]] = []
        censored = never = 0
        seen: set[str] = set()
        for line, obj in _iter_json_list(path.read_text(), file):
            def bad(field: str | None, msg: str, line: int = line) -> None:
                errors.append(RowError(file=file, line=line, field=field, message=msg))
                raise_or_collect(errors, on_error)

            if not isinstance(obj, dict):
                bad(None, f"expected a job object, got {type(obj).__name__}")
                continue
            jobid = obj.get("jobid")
            if not isinstance(jobid, str) or not jobid:
                bad("jobid", f"missing or not a string: {jobid!r}")
                continue
            if jobid in seen:
                bad("jobid", f"duplicate id {jobid!r}")
                continue
            status = obj.get("status")
            if status not in _PHILLY_STATUS:
                bad("status", f"unknown value {status!r} (expected one of Failed, Killed, Pass)")
                continue
            try:
                submit = _philly_time(obj.get("submitted_time"))
                if submit is None:
                    raise ValueError("missing value")
            except ValueError:
                bad("submitted_time", f"not a 'YYYY-MM-DD HH:MM:SS' time: {obj.get('submitted_time')!r}")
                continue
            attempts = obj.get("attempts")
            if not isinstance(attempts, list):
                bad("attempts", f"expected a list, got {type(attempts).__name__}")
                continue
            if not attempts:
                never += 1
                continue
            total = 0.0
            err = None
            cut = False
            gpus = nodes = 0
            for k, att in enumerate(attempts):
                f = f"attempts[{k}]"
                if not isinstance(att, dict):
                    err = (f, "expected an object")
                    break
                try:
                    st = _philly_time(att.get("start_time"))
                except ValueError:
                    err = (f"{f}.start_time", f"not a 'YYYY-MM-DD HH:MM:SS' time: {att.get('start_time')!r}")
                    break
                try:
                    en = _philly_time(att.get("end_time"))
                except ValueError:
                    err = (f"{f}.end_time", f"not a 'YYYY-MM-DD HH:MM:SS' time: {att.get('end_time')!r}")
                    break
                if st is None:
                    err = (f"{f}.start_time", "missing value")
                    break
                if st < submit:
                    err = (f"{f}.start_time", "start_time is before submitted_time")
                    break
                if en is None:
                    if k != len(attempts) - 1:
                        err = (f"{f}.end_time", "missing end_time on an attempt that is not the last")
                        break
                    cut = True
                    continue
                if en < st:
                    err = (f"{f}.end_time", "end_time is before start_time")
                    break
                total += en - st
                detail = att.get("detail")
                if not isinstance(detail, list):
                    err = (f"{f}.detail", "expected a list of {ip, gpus}")
                    break
                try:
                    gpus = sum(len(d["gpus"]) for d in detail)
                    nodes = len(detail)
                except (TypeError, KeyError):
                    err = (f"{f}.detail", "each entry needs a 'gpus' list")
                    break
            if err:
                bad(*err)
                continue
            if cut:
                censored += 1
                continue
            seen.add(jobid)
            rows.append({"id": jobid, "user": obj.get("user"), "vc": obj.get("vc"), "submit_time": submit,
                             "num_gpus": gpus, "num_nodes": nodes if nodes >= 1 else None, "duration_s": total,
                             "outcome": _PHILLY_STATUS[status]})
        origin = min((r["submit_time"] for r in rows), default=0.0)
        jobs = []
        for r in rows:
            r["submit_time"] -= origin
            jobs.append(Job(**{k: x for k, x in r.items() if x is not None}))
        return _trace(jobs, errors, path, self.name, censored=censored, never_started=never,
                      time_origin=pd.Timestamp(origin, unit="s").isoformat())


# --------------------------------------------------------------------------- alibaba pai 2020


PAI_COLUMNS = {
    "job": ["job_name", "inst_id", "user", "status", "start_time", "end_time"],
    "task": ["job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu", "plan_mem",
             "plan_gpu", "gpu_type"],
    "group_tag": ["inst_id", "user", "gpu_type_spec", "group", "workload"],
}
_PAI_STATUS = {"Terminated": Outcome.completed, "Failed": Outcome.failed, "Running": None, "Waiting": None}


def _pai_file(d: Path, table: str) -> Path | None:
    for name in (f"pai_{table}_table.csv", f"pai_{table}_table", f"pai_{table}_table.csv.gz"):
        if (d / name).exists():
            return d / name
    return None


class Pai2020Loader:
    """Alibaba PAI 2020: a directory with `pai_job_table.csv` and `pai_task_table.csv` (no header
    rows; columns as in the dataset's .header files), optionally `pai_group_tag_table.csv`.

    submit = the job's start_time (PAI stamps a job when it is submitted); duration = last task
    end - first task start (job end - job start when no task has times); GPUs = sum over the
    job's tasks of ceil(inst_num * plan_gpu / 100). Terminated -> completed, Failed -> failed;
    Running (no end at trace end) and Waiting (never scheduled) jobs are dropped and counted in
    stats. A bad task row drops its whole job (its GPU count would be wrong otherwise).
    The group-tag `workload` (joined on inst_id) becomes `name` and, through the catalogue, `workload`.
    """

    name = "pai2020"
    description = "Alibaba PAI 2020 pai_job_table + pai_task_table (+ pai_group_tag_table), no header rows"

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace:
        on_error: OnError = opt(options, "on_error", "fail")
        d = path if path.is_dir() else path.parent
        job_f, task_f = _pai_file(d, "job"), _pai_file(d, "task")
        if job_f is None or task_f is None:
            raise TraceFormatError(RowError(file=str(d), line=0, field=None,
                                            message="need pai_job_table.csv and pai_task_table.csv in this directory"))
        jobs_df, e1 = read_csv_strings(job_f, header=False, names=PAI_COLUMNS["job"])
        tasks_df, e2 = read_csv_strings(task_f, header=False, names=PAI_COLUMNS["task"])
        errors: list[RowError] = []
        vj = Validator(jobs_df, str(job_f), e1)
        names = vj.strings("job_name", required=True)
        _duplicates(vj, names, "job_name")
        status = vj.enum("status", {k: k for k in _PAI_STATUS})
        j_start = vj.number("start_time", ge=0)
        j_end = vj.number("end_time", required=False, ge=0)
        vj.order(j_start, j_end, "end_time", "end_time is before start_time")
        finished = status.isin(["Terminated", "Failed"]).to_numpy()
        vj.flag(finished & ~np.isfinite(j_end), "end_time", "missing value for a finished job")

        vt = Validator(tasks_df, str(task_f), e2)
        t_job = vt.strings("job_name", required=True)
        inst = vt.number("inst_num", ge=0, integer=False)
        vt.enum("status", {k: k for k in _PAI_STATUS})
        t_start = vt.number("start_time", required=False, ge=0)
        t_end = vt.number("end_time", required=False, ge=0)
        vt.order(t_start, t_end, "end_time", "end_time is before start_time")
        plan_gpu = vt.number("plan_gpu", required=False, ge=0)
        gpu_type = vt.strings("gpu_type")

        both = vj.errors + vt.errors
        if both and on_error == "fail":
            raise TraceFormatError(min(both, key=lambda e: (e.file != str(job_f), e.line)))
        errors += both

        t = pd.DataFrame({"job_name": t_job, "gpus": np.ceil(np.nan_to_num(inst) * np.nan_to_num(plan_gpu) / 100.0),
                          "start": t_start, "end": t_end, "gpu_type": gpu_type.replace("", None), "bad": vt.bad})
        agg = t.groupby("job_name", sort=False).agg(gpus=("gpus", "sum"), start=("start", "min"), end=("end", "max"),
                                                    gpu_type=("gpu_type", "first"), bad=("bad", "any"), n=("gpus", "size"))
        wl_by_inst: dict[str, str] = {}
        gt_f = _pai_file(d, "group_tag")
        if gt_f is not None:
            gt, e3 = read_csv_strings(gt_f, header=False, names=PAI_COLUMNS["group_tag"])
            raise_or_collect(e3, on_error)
            errors += e3
            wl_by_inst = dict(zip(gt["inst_id"].str.strip(), gt["workload"].fillna("").str.strip()))

        ok = ~vj.bad
        a = agg.reindex(names.to_numpy())
        has_tasks = a["n"].notna().to_numpy()
        task_bad = a["bad"].fillna(False).astype(bool).to_numpy()
        running = (status == "Running").to_numpy()
        waiting = (status == "Waiting").to_numpy()
        stats = {"running_dropped": int((ok & running).sum()), "waiting_dropped": int((ok & waiting).sum())}
        live = ok & ~running & ~waiting
        stats["no_tasks_dropped"] = int((live & ~has_tasks).sum())
        stats["bad_task_dropped"] = int((live & has_tasks & task_bad).sum())
        drop = running | waiting | ~has_tasks | task_bad
        t_s, t_e = a["start"].to_numpy(dtype=float), a["end"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            dur = np.where(np.isfinite(t_s) & np.isfinite(t_e), t_e - t_s, j_end - j_start)
            dur = np.maximum(dur, 0.0)
        keep = ok & ~drop
        origin = float(np.min(j_start[keep])) if keep.any() else 0.0
        wl_names = vj.strings("inst_id").map(wl_by_inst) if wl_by_inst else pd.Series([None] * len(jobs_df))
        cols = {"id": names, "user": vj.strings("user"), "submit_time": j_start - origin,
                "num_gpus": a["gpus"].fillna(0).to_numpy(dtype=float), "duration_s": dur,
                "outcome": status.map(_PAI_STATUS), "name": wl_names, "gpu_type": a["gpu_type"]}
        saved = vj.bad.copy()
        vj.bad = vj.bad | drop
        jobs = _build(str(job_f), vj, cols, workload_names=wl_names)
        vj.bad = saved
        stats["orphan_tasks"] = int((~t["job_name"].isin(set(names))).sum())
        return _trace(jobs, errors, d, self.name, rows=len(jobs_df), task_rows=len(tasks_df), **stats)


# --------------------------------------------------------------------------- alibaba 2023 openb


_OPENB_PHASE = {"Succeeded": "Succeeded", "Failed": "Failed", "Running": "Running", "Pending": "Pending"}


class Alibaba2023Loader:
    """Alibaba gpu-v2023 "openb" pod list (`openb_pod_list_*.csv` with time columns).

    submit = creation_time; duration = deletion_time - scheduled_time. Succeeded -> completed,
    Failed -> failed, Running (still running when deleted) -> completed by default (option
    `running_as="cancelled"` to treat deletion as a kill). Pending pods never ran (no
    scheduled_time): dropped and counted in stats['pending_dropped'] (option `keep_pending=True`
    keeps them as cancelled jobs of duration 0). A fractional pod (gpu_milli < 1000) counts as
    one GPU; its share is kept in `name` ("<pod> gpu_share=0.460"). qos -> job_type.
    CPU-only pods (num_gpu 0) are kept unless `gpu_only=True`.
    """

    name = "alibaba2023"
    description = "Alibaba gpu-v2023 openb pod list (name,...,num_gpu,gpu_milli,...,pod_phase,creation/deletion/scheduled_time)"
    REQUIRED = ("name", "num_gpu", "gpu_milli", "pod_phase", "creation_time", "deletion_time", "scheduled_time")

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace:
        on_error: OnError = opt(options, "on_error", "fail")
        running_as = Outcome(opt(options, "running_as", "completed"))
        keep_pending = bool(opt(options, "keep_pending", False))
        gpu_only = bool(opt(options, "gpu_only", False))
        df, parse_errors = read_csv_strings(path)
        v = Validator(df, str(path), parse_errors)
        v.require_columns(self.REQUIRED)
        names = v.strings("name", required=True)
        _duplicates(v, names, "name")
        if "cpu_milli" in df:
            v.number("cpu_milli", required=False, ge=0)
        if "memory_mib" in df:
            v.number("memory_mib", required=False, ge=0)
        gpus = v.number("num_gpu", ge=0, integer=True, what="an integer")
        milli = v.number("gpu_milli", required=False, ge=0)
        v.flag(np.isfinite(milli) & (milli > 1000), "gpu_milli", lambda i: f"must be <= 1000, got {v.raw('gpu_milli', i)!r}")
        phase = v.enum("pod_phase", _OPENB_PHASE)
        created = v.number("creation_time", ge=0)
        deleted = v.number("deletion_time", ge=0)
        scheduled = v.number("scheduled_time", required=False, ge=0)
        pending = (phase == "Pending").to_numpy()
        v.flag(~pending & ~np.isfinite(scheduled) & ~v.bad, "scheduled_time", "missing value for a pod that ran")
        v.order(created, scheduled, "scheduled_time", "scheduled_time is before creation_time")
        v.order(scheduled, deleted, "deletion_time", "deletion_time is before scheduled_time")
        v.order(created, deleted, "deletion_time", "deletion_time is before creation_time")
        mask = v.finish(on_error)
        stats: dict[str, Any] = {"pending_dropped": 0, "cpu_pods_dropped": 0,
                                 "fractional_gpu_pods": int((mask & (gpus == 1) & (milli < 1000)).sum())}
        drop = np.zeros(len(df), dtype=bool)
        if not keep_pending:
            drop |= pending
            stats["pending_dropped"] = int((mask & pending).sum())
        if gpu_only:
            drop |= gpus == 0
            stats["cpu_pods_dropped"] = int((mask & (gpus == 0)).sum())
        outcome_map = {"Succeeded": Outcome.completed, "Failed": Outcome.failed, "Running": running_as,
                       "Pending": Outcome.cancelled}
        with np.errstate(invalid="ignore"):
            dur = np.where(pending, 0.0, deleted - scheduled)
            frac = np.isfinite(milli) & (milli < 1000) & (gpus >= 1)
        label = np.where(frac, names.to_numpy().astype(object) + np.char.mod(" gpu_share=%.3f", np.nan_to_num(milli) / 1000.0).astype(object),
                         names.to_numpy().astype(object))
        cols = {"id": names, "submit_time": created, "num_gpus": gpus, "duration_s": dur,
                "outcome": phase.map(outcome_map), "name": label,
                "job_type": v.strings("qos") if "qos" in df else pd.Series([""] * len(df))}
        if "gpu_spec" in df:
            cols["gpu_type"] = v.strings("gpu_spec")
        saved = v.bad.copy()
        v.bad = v.bad | drop
        jobs = _build(str(path), v, cols)
        v.bad = saved
        return _trace(jobs, v.errors, path, self.name, rows=len(df), rows_good=int(mask.sum()), **stats)


# --------------------------------------------------------------------------- gavel


GAVEL_COLUMNS = ["job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps", "arrival_time", "scale_factor"]
_GAVEL_CLASSES = (1, 2, 4, 8)


def gavel_base_type(job_type: str) -> str:
    """'ResNet-18 (batch size 32)' -> 'ResNet-18'."""
    return job_type.split(" (", 1)[0].strip()


def gpu_class(n: int | np.ndarray) -> Any:
    """Nearest of the Philly GPU classes {1, 2, 4, 8} (ties to the larger, in log space)."""
    arr = np.atleast_1d(np.asarray(n, dtype=float))
    classes = np.array(_GAVEL_CLASSES, dtype=float)
    logd = np.abs(np.log2(np.maximum(arr, 1))[:, None] - np.log2(classes)[None, :])
    # ties -> larger class: subtract a tiny amount proportional to the class
    idx = np.argmin(logd - 1e-9 * classes[None, :], axis=1)
    out = classes[idx].astype(int)
    return int(out[0]) if np.ndim(n) == 0 else out


@lru_cache(maxsize=4)
def gavel_steps_per_second(path: str | None = None) -> dict[str, dict[int, float]]:
    """Estimated steps/s per (Gavel job type, GPU class) from `traces/calibration/gavel_steps_per_second.yaml`."""
    p = Path(path) if path else TRACES_DIR / "calibration" / "gavel_steps_per_second.yaml"
    data = yaml.safe_load(p.read_text())
    return {jt: {int(k): float(x) for k, x in m.items()} for jt, m in data["steps_per_second"].items()}


class GavelLoader:
    """Gavel/Blox TSV in the old 7-column format (no header): job_type, command, num_steps_arg,
    needs_data_dir, total_steps, arrival_time (s), scale_factor (#GPUs). A directory loads every
    `*.trace` in it, vc = file stem, id = `<vc>-<line>`.

    Gavel encodes the duration as total_steps = duration x throughput(job_type, scale_factor) on its
    reference GPU; its throughput table is not here. We divide total_steps by an ESTIMATED rate
    (traces/calibration/gavel_steps_per_second.yaml, made by traces/calibration/make_calibration.py:
    for each job type and GPU class, median(total_steps) / median(Philly duration of that GPU class)).
    The relative durations within a job type are the trace's own; the scale is an estimate.
    GPU counts outside {1,2,4,8} use the nearest class's rate times (GPUs / class).
    workload = catalogue class of the base job type (e.g. 'ResNet-18' -> resnet18); name = job_type.
    """

    name = "gavel"
    description = "Gavel/Blox 7-column TSV (.trace), file or directory of per-VC files"

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace:
        on_error: OnError = opt(options, "on_error", "fail")
        files = sorted(path.glob("*.trace")) if path.is_dir() else [path]
        if not files:
            raise TraceFormatError(RowError(file=str(path), line=0, message="no *.trace files in this directory"))
        rates = opt(options, "steps_per_second", None) or gavel_steps_per_second(opt(options, "rates_file", None))
        jobs: list[Job] = []
        errors: list[RowError] = []
        rows = 0
        for f in files:
            df, errs = read_csv_strings(f, header=False, names=GAVEL_COLUMNS, sep="\t")
            rows += len(df)
            vc = f.stem
            v = Validator(df, str(f), errs)
            jt = v.strings("job_type", required=True)
            base = jt.map(gavel_base_type)
            v.flag(~jt.isin(list(rates)).to_numpy() & (jt.to_numpy() != ""), "job_type",
                   lambda i, jt=jt: f"no throughput estimate for job type {jt.iat[i]!r}")
            steps = v.number("total_steps", ge=0)
            arrival = v.number("arrival_time", ge=0)
            sf = v.number("scale_factor", ge=1, integer=True, what="an integer")
            mask = v.finish(on_error)
            rate = np.full(len(df), np.nan)
            idx = np.flatnonzero(mask)
            keyed = pd.DataFrame({"jt": jt.to_numpy()[idx], "sf": sf[idx].astype(int), "i": idx})
            for (job_type, n), grp in keyed.groupby(["jt", "sf"], sort=False):  # one rate per (type, GPUs)
                table = rates[job_type]
                cls = n if n in table else int(gpu_class(n))
                if cls not in table:
                    cls = min(table, key=lambda c: abs(math.log2(c) - math.log2(n)))
                rate[grp["i"].to_numpy()] = table[cls] * (n / cls)
            cols = {"id": pd.Series([f"{vc}-{ln}" for ln in v.lines]), "submit_time": arrival,
                    "num_gpus": sf, "duration_s": steps / rate, "name": jt, "job_type": base,
                    "vc": pd.Series([vc] * len(df)), "outcome": pd.Series([Outcome.completed] * len(df))}
            errors += v.errors
            jobs += _build(str(f), v, cols, workload_names=base)
        return _trace(jobs, errors, path, self.name, rows=rows, files=len(files))


# --------------------------------------------------------------------------- registry / detection


LOADERS: dict[str, Any] = {
    ld.name: ld
    for ld in (CsvLoader(), PhillyLoader(), HeliosLoader(), AcmeLoader(), Pai2020Loader(), Alibaba2023Loader(),
               GavelLoader())
}


def detect_format(path: Path) -> str:
    """Guess a file's format from its name, then from its header."""
    name = path.name.lower()
    if path.is_dir():
        if any(path.glob("*.trace")):
            return "gavel"
        if _pai_file(path, "job") is not None:
            return "pai2020"
        raise TraceFormatError(RowError(file=str(path), line=0,
                                        message="cannot tell the format of this directory (no *.trace, no pai_job_table)"))
    if name.endswith((".json", ".jsonl")) or name.startswith("cluster_job_log"):
        return "philly"
    if name.endswith(".trace"):
        return "gavel"
    if name.startswith("pai_"):
        return "pai2020"
    if name.startswith("openb_pod_list"):
        return "alibaba2023"
    if name.startswith(("trace_seren", "trace_kalos")):
        return "acme"
    if name.startswith("cluster_log"):
        return "helios"
    header = set(csv_header(path))
    if {"pod_phase", "creation_time"} <= header:
        return "alibaba2023"
    if {"type", "state", "job_id"} <= header:
        return "acme"
    if {"state", "job_id", "vc"} <= header:
        return "helios"
    if {"id", "submit_time", "duration_s"} <= header:
        return "csv"
    raise TraceFormatError(RowError(file=str(path), line=1, field=None,
                                    message=f"cannot tell the trace format from the name or header; pass fmt= one of "
                                            f"{', '.join(sorted(LOADERS))}"))
