"""`Simulator.jobs`: every job's runtime state in replay order, kept only while it matters.

A `JobState` is made when a job is first needed (its arrival, or earlier if someone looks it up) and,
once the job has ended, its outcome moves into NumPy columns (`Results`) and the object goes: memory
grows with the jobs in the system (queued or running), not with the trace. Looking up an ended job
gives a fresh `JobState` rebuilt from the columns (a snapshot: changing it changes nothing). A job
whose `extra` holds a policy's notes keeps its object, so that nothing a policy wrote is lost.

Annotations of ended jobs are kept compactly when they differ from an earlier one only in `job_id`
and `made_at` (e.g. the `none` annotator's): the shared part once, the time in a column.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import overload

import numpy as np

from schedmate.jobtable import JobTable
from schedmate.records import Annotation
from schedmate.sim.state import JobState, Status

_FLOATS = ("first_start", "end_time", "queued_s", "executed_s", "comm_lost_gpu_s", "work_done", "last_start",
           "last_preempted", "speed", "eligible_since", "last_update")
_INTS = ("preemptions", "migrations", "max_nodes", "max_racks", "nodes_spanned", "racks_spanned")
_shared = operator.itemgetter(*(k for k in Annotation.model_fields if k not in ("job_id", "made_at")))
"""An annotation's fields but `job_id` and `made_at`, from its `__dict__`."""
MAX_TEMPLATES = 4


class Results:
    """The outcome of every ended job: one structured row per job, one field per `JobState` field that
    still means something (`first_start` None is NaN; `ended_by` a code into `reasons`). The columns
    are views: `results.end_time`, `results.preemptions`, ..."""

    def __init__(self, n: int) -> None:
        self.rows = np.zeros(n, dtype=[(f, np.float64) for f in _FLOATS] + [(f, np.int32) for f in _INTS]
                             + [("ended_by", np.int8)])
        defaults = {f.name: f.default for f in fields(JobState)}
        for f in _FLOATS:  # a job that never arrived has its state's defaults
            d = defaults[f]
            self.rows[f] = math.nan if d is None else d
        self.reasons: list[str] = ["trace"]
        """`ended_by` codes."""

    def __getattr__(self, name: str) -> np.ndarray:
        if name in _FLOATS or name in _INTS or name == "ended_by":
            return self.rows[name]
        raise AttributeError(name)

    def store(self, js: JobState) -> None:
        reason = js.ended_by
        if reason == "trace":
            code = 0
        else:
            if reason not in self.reasons:
                self.reasons.append(reason)
            code = self.reasons.index(reason)
        first = js.first_start
        self.rows[js.idx] = (
            math.nan if first is None else first, js.end_time, js.queued_s, js.executed_s, js.comm_lost_gpu_s,
            js.work_done, js.last_start, js.last_preempted, js.speed, js.eligible_since, js.last_update,
            js.preemptions, js.migrations, js.max_nodes, js.max_racks, js.nodes_spanned, js.racks_spanned, code)

    def load(self, js: JobState) -> None:
        row = self.rows[js.idx].tolist()
        for f, v in zip((*_FLOATS, *_INTS), row):
            setattr(js, f, v)
        if math.isnan(row[0]):
            js.first_start = None
        js.ended_by = self.reasons[row[-1]]


class Annotations:
    """Each ended job's last annotation; those that differ from a template only in `job_id` and `made_at`
    are kept as (template, made_at)."""

    def __init__(self, n: int) -> None:
        self.objects: list[Annotation | None] = [None] * n
        self.template = np.full(n, -1, dtype=np.int8)
        self.made_at = np.zeros(n)
        self.templates: list[tuple[Annotation, tuple]] = []
        self._last = -1
        """The template the last annotation kept as a time matched (asked first: runs of jobs share one)."""

    def store(self, i: int, job_id: str, ann: Annotation) -> None:
        if ann.job_id == job_id:
            shared = _shared(ann.__dict__)
            k = self._last
            if k < 0 or self.templates[k][1] != shared:
                # the first template that matches, as the search over all gives (an earlier one that
                # matched too would have equal shared fields, hence be this one: templates differ)
                k = next((k for k, (_, t) in enumerate(self.templates) if t == shared), -1)
                if k < 0 and len(self.templates) < MAX_TEMPLATES:
                    k = len(self.templates)
                    self.templates.append((ann, shared))
            if k >= 0:
                self._last = k
                self.template[i] = k
                self.made_at[i] = ann.made_at
                return
        self.objects[i] = ann

    def get(self, i: int, job_id: str) -> Annotation | None:
        k = self.template.item(i)
        if k < 0:
            return self.objects[i]
        return self.templates[k][0].model_copy(update={"job_id": job_id, "made_at": self.made_at.item(i)})


class JobStates(Sequence[JobState]):
    """The runtime states of a replay's jobs, by index (replay order); see the module docstring."""

    def __init__(self, table: JobTable, blank: Annotation) -> None:
        n = len(table)
        self.table = table
        self.blank = blank
        self.live: list[JobState | None] = [None] * n
        self.retired = np.zeros(n, dtype=bool)
        self.results = Results(n)
        self.annotations = Annotations(n)

    def __len__(self) -> int:
        return len(self.live)

    def make(self, i: int) -> JobState:
        """The state of job `i` before it arrives (made once, then kept until the job ends)."""
        js = self.live[i]
        if js is None:
            js = self.live[i] = JobState(job=self.table.row(i), idx=i, annotation=self.blank,
                                         work_total=self.table.duration_s.item(i))
        return js

    def retire(self, js: JobState) -> None:
        """`js` has ended: keep its outcome in the columns and let the object go (unless a policy left
        notes in `js.extra`)."""
        if js.extra:
            return
        i = js.idx
        self.results.store(js)
        self.annotations.store(i, self.table.id[i], js.annotation)
        self.retired[i] = True
        self.live[i] = None

    def snapshot(self, i: int) -> JobState:
        js = JobState(job=self.table.row(i), idx=i, annotation=self.annotation(i), status=Status.done,
                      work_total=self.table.duration_s.item(i))
        self.results.load(js)
        return js

    def annotation(self, i: int) -> Annotation:
        js = self.live[i]
        if js is not None:
            return js.annotation
        if self.retired[i]:
            ann = self.annotations.get(i, self.table.id[i])
            if ann is not None:
                return ann
        return self.blank

    def _get(self, i: int) -> JobState:
        js = self.live[i]
        if js is not None:
            return js
        return self.snapshot(i) if self.retired[i] else self.make(i)

    @overload
    def __getitem__(self, i: int) -> JobState: ...

    @overload
    def __getitem__(self, i: slice) -> list[JobState]: ...

    def __getitem__(self, i: int | slice) -> JobState | list[JobState]:
        if isinstance(i, slice):
            return [self._get(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("job index out of range")
        return self._get(i)

    def __iter__(self) -> Iterator[JobState]:
        return (self._get(i) for i in range(len(self)))

    def __reversed__(self) -> Iterator[JobState]:
        return (self._get(i) for i in range(len(self) - 1, -1, -1))

    def kept(self) -> list[JobState]:
        """The states still held as objects (not yet ended, or ended with policy notes), by index."""
        return [js for js in self.live if js is not None]


__all__ = ["Annotations", "JobStates", "Results"]
