"""Alibaba traces: PAI 2020 job/task tables and the 2023 openb pod list."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedmate.records import Outcome
from schedmate.traces.base import (
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
    _duplicates,
    _trace,
)

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
