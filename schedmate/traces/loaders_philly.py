"""The Philly cluster_job_log (JSON list of jobs with attempts) and the Philly-derived Gavel workloads."""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from schedmate.jobtable import JobTable
from schedmate.records import Job, Outcome
from schedmate.traces.base import (
    TRACES_DIR,
    LoadedTrace,
    OnError,
    RowError,
    TraceFormatError,
    Validator,
    opt,
    raise_or_collect,
    read_csv_strings,
)
from schedmate.traces.loader_common import (
    _build,
    _trace,
)

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
        tables: list[JobTable] = []
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
            tables.append(_build(str(f), v, cols, workload_names=base))
        return _trace(JobTable.concat(tables), errors, path, self.name, rows=rows, files=len(files))
