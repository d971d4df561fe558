"""A trace's jobs as columns: what the replay engine reads, without one pydantic object per job.

A `JobTable` holds one NumPy array per `Job` field (strings as NumPy `StringDType`, enums as small
integer codes, optional numbers as NaN). Loaders and generators build it directly from validated
columns; `Job` records are made only at the boundaries (`job(i)`, `to_jobs()`), and the engine hands
policies and annotators a `JobView`: a two-slot object that reads one row and answers like a `Job`.

A table built from `Job` records (`from_jobs`) keeps them: `row(i)` then returns the record itself, so
a replay of a job list sees exactly the objects it was given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from schedmate.records import FailureCategory, Job, JobFacts, Outcome, SemanticRefs

STR = np.dtypes.StringDType()
OPT_STR = np.dtypes.StringDType(na_object=None)
OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
FAILURES: tuple[FailureCategory, ...] = tuple(FailureCategory)
_OUTCOME_CODE = {o: i for i, o in enumerate(OUTCOMES)}
_FAILURE_CODE = {f: i for i, f in enumerate(FAILURES)}

_OPT_STRINGS = ("user", "name", "job_type", "vc", "gpu_type", "workload")
_FLOATS = ("submit_time", "duration_s", "spread_slowdown")
_OPT_FLOATS = ("requested_time_s", "hang_onset_s")
_JOB_LIST = TypeAdapter(list[Job])


def _floats(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def _opt_floats(values: Iterable[float | None]) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


@dataclass(frozen=True, eq=False)
class JobTable:
    """Columns of `Job` fields, one row per job. Build with `from_columns` (validated) or `from_jobs`."""

    id: np.ndarray
    submit_time: np.ndarray
    num_gpus: np.ndarray
    duration_s: np.ndarray
    user: np.ndarray
    name: np.ndarray
    job_type: np.ndarray
    vc: np.ndarray
    gpu_type: np.ndarray
    workload: np.ndarray
    spread_slowdown: np.ndarray
    outcome: np.ndarray
    """int8 codes into `OUTCOMES`."""
    num_nodes: np.ndarray
    """int32, 0 where unknown."""
    requested_time_s: np.ndarray
    hang_onset_s: np.ndarray
    failure_category: np.ndarray
    """int8 codes into `FAILURES`, -1 where none."""
    semantic: np.ndarray | None = None
    """object array of `SemanticRefs` or None; None when no job has any."""
    records: Sequence[Job] | None = field(default=None, repr=False)
    """The `Job` records the table was built from, if any (same order)."""

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_columns(cls, n: int, columns: Mapping[str, Any]) -> JobTable:
        """A table of `n` rows from per-field columns (`Job` field names; `outcome` and
        `failure_category` as enums, strings or codes; missing optional fields default as in `Job`).
        Raises `ValueError` naming the first row and field that `Job` would reject."""
        c = dict(columns)
        for required in ("id", "submit_time", "num_gpus", "duration_s"):
            if required not in c:
                raise ValueError(f"missing column {required!r}")
        empty_str = np.full(n, None, dtype=OPT_STR)
        nan = np.full(n, math.nan)
        kw: dict[str, Any] = {
            "id": np.asarray(c["id"], dtype=STR),
            "num_gpus": np.asarray(c["num_gpus"], dtype=np.int64),
            "outcome": _codes(c.get("outcome"), n, _OUTCOME_CODE, Outcome, _OUTCOME_CODE[Outcome.completed]),
            "failure_category": _codes(c.get("failure_category"), n, _FAILURE_CODE, FailureCategory, -1),
            "num_nodes": np.asarray(c["num_nodes"], dtype=np.int32) if "num_nodes" in c else np.zeros(n, np.int32),
            "spread_slowdown": _floats(c["spread_slowdown"]) if "spread_slowdown" in c else np.ones(n),
            "semantic": _semantic(c.get("semantic"), n),
        }
        for f in ("submit_time", "duration_s"):
            kw[f] = _floats(c[f])
        for f in _OPT_FLOATS:
            kw[f] = _opt_floats(c[f]) if f in c and not isinstance(c[f], np.ndarray) else (
                _floats(c[f]) if f in c else nan.copy())
        for f in _OPT_STRINGS:
            kw[f] = np.asarray(c[f], dtype=OPT_STR) if f in c else empty_str.copy()
        table = cls(**kw)
        if any(len(getattr(table, f.name)) != n for f in fields(cls) if f.name not in ("semantic", "records")):
            raise ValueError("columns of different lengths")
        table.check()
        return table

    @classmethod
    def from_jobs(cls, jobs: Iterable[Job]) -> JobTable:
        """A table of `Job` records (kept: `row(i)` returns them)."""
        jobs = list(jobs)
        cols: dict[str, Any] = {
            f: [getattr(j, f) for j in jobs]
            for f in ("id", "submit_time", "num_gpus", "duration_s", "spread_slowdown", "outcome",
                      "failure_category", *_OPT_STRINGS, *_OPT_FLOATS)
        }
        cols["num_nodes"] = [j.num_nodes or 0 for j in jobs]
        sem = [j.semantic for j in jobs]
        if any(s is not None for s in sem):
            cols["semantic"] = sem
        table = cls.from_columns(len(jobs), cols)
        return replace(table, records=jobs)

    def check(self) -> None:
        """The constraints `Job` puts on its fields, for every row: `ValueError` at the first bad row."""
        checks = (
            ("submit_time", ~(self.submit_time >= 0)),
            ("num_gpus", self.num_gpus < 0),
            ("num_nodes", self.num_nodes < 0),
            ("duration_s", ~(self.duration_s >= 0)),
            ("spread_slowdown", ~(self.spread_slowdown >= 1.0)),
            ("requested_time_s", self.requested_time_s < 0),
            ("hang_onset_s", self.hang_onset_s < 0),
        )
        bad = [(int(np.argmax(mask)), name) for name, mask in checks if mask.any()]
        if bad:
            row, name = min(bad)
            raise InvalidRow(row, name, f"invalid value {getattr(self, name)[row]!r}")

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return len(self.id)

    def row(self, i: int) -> Job | JobView:
        """Row `i` as the engine hands it out: the original record if there is one, else a view."""
        return self.records[i] if self.records is not None else JobView(self, i)

    def job(self, i: int) -> Job:
        """Row `i` as a validated `Job` record."""
        if self.records is not None:
            return self.records[i]
        return Job(**self._row_dict(i))

    def _row_dict(self, i: int) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id[i], "user": self.user[i], "submit_time": self.submit_time.item(i),
            "num_gpus": self.num_gpus.item(i), "name": self.name[i], "job_type": self.job_type[i],
            "vc": self.vc[i], "gpu_type": self.gpu_type[i], "outcome": OUTCOMES[self.outcome.item(i)],
            "duration_s": self.duration_s.item(i), "workload": self.workload[i],
            "spread_slowdown": self.spread_slowdown.item(i),
        }
        nodes = self.num_nodes.item(i)
        d["num_nodes"] = nodes or None
        for f in _OPT_FLOATS:
            v = getattr(self, f).item(i)
            d[f] = None if math.isnan(v) else v
        fc = self.failure_category.item(i)
        d["failure_category"] = FAILURES[fc] if fc >= 0 else None
        d["semantic"] = self.semantic[i] if self.semantic is not None else None
        return d

    def to_jobs(self) -> list[Job]:
        """Every row as a validated `Job` (column-wise, then one pydantic call for the whole list)."""
        if self.records is not None:
            return list(self.records)
        n = len(self)
        cols: dict[str, list[Any]] = {f: getattr(self, f).tolist() for f in (*_OPT_STRINGS, *_FLOATS, "id", "num_gpus")}
        for f in _OPT_FLOATS:
            cols[f] = [None if math.isnan(v) else v for v in getattr(self, f).tolist()]
        cols["num_nodes"] = [v or None for v in self.num_nodes.tolist()]
        cols["outcome"] = [OUTCOMES[c] for c in self.outcome.tolist()]
        cols["failure_category"] = [FAILURES[c] if c >= 0 else None for c in self.failure_category.tolist()]
        cols["semantic"] = self.semantic.tolist() if self.semantic is not None else [None] * n
        keys = list(cols)
        return _JOB_LIST.validate_python([dict(zip(keys, row)) for row in zip(*cols.values())])

    # ------------------------------------------------------------------ whole-table operations
    def take(self, index: np.ndarray | Sequence[int]) -> JobTable:
        """The rows at `index`, in that order (a boolean mask works too)."""
        idx = np.asarray(index)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        cols = {f.name: getattr(self, f.name)[idx] for f in fields(self)
                if f.name not in ("semantic", "records")}
        sem = self.semantic[idx] if self.semantic is not None else None
        recs = [self.records[i] for i in idx.tolist()] if self.records is not None else None
        return JobTable(**cols, semantic=sem, records=recs)

    def sort_order(self) -> np.ndarray:
        """Row order by (submit_time, id), stable: the order the engine replays jobs in."""
        return np.lexsort((self.id, self.submit_time))

    def sorted(self) -> JobTable:
        order = self.sort_order()
        if len(order) and (order == np.arange(len(order))).all():
            return self
        return self.take(order)

    @classmethod
    def concat(cls, tables: Sequence[JobTable]) -> JobTable:
        """The rows of `tables`, one after the other (record links kept only if every table has them)."""
        if not tables:
            return cls.from_columns(0, {"id": [], "submit_time": [], "num_gpus": [], "duration_s": []})
        cols = {f.name: np.concatenate([getattr(t, f.name) for t in tables]) for f in fields(cls)
                if f.name not in ("semantic", "records")}
        sem = None
        if any(t.semantic is not None for t in tables):
            sem = np.concatenate([t.semantic if t.semantic is not None else np.full(len(t), None, dtype=object)
                                  for t in tables])
        recs = None
        if all(t.records is not None for t in tables):
            recs = [r for t in tables for r in t.records]  # type: ignore[union-attr]
        return cls(**cols, semantic=sem, records=recs)

    def head(self, n: int) -> JobTable:
        return self.take(np.arange(min(max(0, n), len(self))))

    def with_columns(self, **columns: Any) -> JobTable:
        """A copy with some columns replaced (record links dropped: the rows changed)."""
        kw = {k: (np.asarray(v, dtype=getattr(self, k).dtype) if k != "semantic" else v) for k, v in columns.items()}
        out = replace(self, records=None, **kw)
        out.check()
        return out

    def to_frame(self) -> Any:
        """The jobs as a pandas table (the `Job` fields as columns, enums as their values)."""
        import pandas as pd

        data: dict[str, Any] = {}
        for f in fields(self):
            if f.name in ("records", "semantic"):
                continue
            data[f.name] = getattr(self, f.name)
        data["outcome"] = np.array([o.value for o in OUTCOMES], dtype=object)[self.outcome]
        fc = np.array([f.value for f in FAILURES] + [None], dtype=object)
        data["failure_category"] = fc[self.failure_category]
        data["num_nodes"] = np.where(self.num_nodes > 0, self.num_nodes, np.nan)
        return pd.DataFrame(data)


class InvalidRow(ValueError):
    """A column value `Job` would reject: `row` (0-based in the table) and `field` name it."""

    def __init__(self, row: int, field: str, message: str) -> None:
        super().__init__(f"row {row} field {field!r}: {message}")
        self.row = row
        self.field = field


def _codes(values: Any, n: int, mapping: Mapping[Any, int], enum: type, default: int) -> np.ndarray:
    if values is None:
        return np.full(n, default, dtype=np.int8)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int8)
    out = np.empty(n, dtype=np.int8)
    for i, v in enumerate(values):
        out[i] = default if v is None else mapping[v if isinstance(v, enum) else enum(v)]
    return out


def _semantic(values: Any, n: int) -> np.ndarray | None:
    if values is None:
        return None
    arr = np.empty(n, dtype=object)
    arr[:] = list(values)
    return arr


class JobView(JobFacts):
    """Row `i` of a `JobTable`, read like a `Job` (same attribute names, same Python types).

    What the engine gives policies and annotators for jobs that came as columns: two slots instead of a
    pydantic object. `to_job()` makes the validated record."""

    __slots__ = ("_i", "_t")

    def __init__(self, table: JobTable, i: int) -> None:
        self._t = table
        self._i = i

    @property
    def id(self) -> str:
        return self._t.id[self._i]

    @property
    def user(self) -> str | None:
        return self._t.user[self._i]

    @property
    def submit_time(self) -> float:
        return self._t.submit_time.item(self._i)

    @property
    def num_gpus(self) -> int:
        return self._t.num_gpus.item(self._i)

    @property
    def num_nodes(self) -> int | None:
        return self._t.num_nodes.item(self._i) or None

    @property
    def name(self) -> str | None:
        return self._t.name[self._i]

    @property
    def job_type(self) -> str | None:
        return self._t.job_type[self._i]

    @property
    def vc(self) -> str | None:
        return self._t.vc[self._i]

    @property
    def gpu_type(self) -> str | None:
        return self._t.gpu_type[self._i]

    @property
    def outcome(self) -> Outcome:
        return OUTCOMES[self._t.outcome.item(self._i)]

    @property
    def duration_s(self) -> float:
        return self._t.duration_s.item(self._i)

    @property
    def requested_time_s(self) -> float | None:
        v = self._t.requested_time_s.item(self._i)
        return None if math.isnan(v) else v

    @property
    def workload(self) -> str | None:
        return self._t.workload[self._i]

    @property
    def spread_slowdown(self) -> float:
        return self._t.spread_slowdown.item(self._i)

    @property
    def failure_category(self) -> FailureCategory | None:
        c = self._t.failure_category.item(self._i)
        return FAILURES[c] if c >= 0 else None

    @property
    def hang_onset_s(self) -> float | None:
        v = self._t.hang_onset_s.item(self._i)
        return None if math.isnan(v) else v

    @property
    def semantic(self) -> SemanticRefs | None:
        sem = self._t.semantic
        return sem[self._i] if sem is not None else None

    def to_job(self) -> Job:
        return self._t.job(self._i)

    def __repr__(self) -> str:
        return f"JobView({self.id!r}, row {self._i})"


__all__ = ["FAILURES", "OUTCOMES", "InvalidRow", "JobTable", "JobView"]
