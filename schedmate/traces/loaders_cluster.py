"""Slurm-style cluster logs: Helios (Venus, Earth, Saturn, Uranus) and Acme (Seren, Kalos)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedmate.records import FailureCategory, Outcome
from schedmate.traces.base import (
    MAX_DURATION_S,
    LoadedTrace,
    OnError,
    Validator,
    opt,
    read_csv_strings,
)
from schedmate.traces.loader_common import (
    _build,
    _duplicates,
    _trace,
)

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
            jobs = jobs.take(jobs.num_gpus > 0)
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
