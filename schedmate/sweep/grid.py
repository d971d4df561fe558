"""What a sweep runs: a `SweepGrid` (axes -> lists) expands into `SweepCell`s, one replay each.

    grid = SweepGrid(traces=["synth:helios:300"], policies=["fifo", "sjf"], seeds=[0, 1])
    for cell in grid.cells():
        print(cell.key, cell.params())

A cell is one `ReplaySpec` (policy, annotator, cluster, network, seed, options) on one `TraceSource`
(a trace spec plus how its jobs are cut and paced) at one `load`. Its `key` is a hash of its canonical
parameters: the same cell has the same key in every run, on every machine, which is what lets an
interrupted sweep skip the cells it has already finished.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from schedmate.replay import ReplaySpec

Scalar = str | int | float | bool


class GridError(ValueError):
    """A grid file or option that cannot be used; the message names the file and field."""


def option_pairs(options: dict[str, Scalar]) -> list[str]:
    """`{"node_factor": 4, "load_aware": False}` -> `["node_factor=4", "load_aware=false"]` (as `-o` takes them)."""
    return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()]


def resolve(ref: str, what: str) -> Callable[..., Any]:
    """`package.module:function` -> the function; a clear error naming `what` otherwise."""
    module, sep, name = ref.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"{what}: expected 'package.module:function', got {ref!r}")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"{what}: cannot import {ref!r}: {e}") from None
    if not callable(fn):
        raise TypeError(f"{what}: {ref!r} is not callable")
    return fn


class TraceSource(BaseModel):
    """One entry of the `traces` axis: a `load_trace` spec and how its jobs are cut and paced.

    A plain string in a grid is `TraceSource(spec=...)`. The cuts apply in this order: jobs with fewer
    than `min_gpus` GPUs are dropped, then the window `[skip, skip + take)` in trace order is kept, then
    arrivals are rebased to the window's first job and divided by `compress` x the cell's `load`
    (nothing is rebased when that product is 1), and `static` submits every job at time 0."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    spec: str
    """A `load_trace` spec (`default`, `synth:helios:600:3`, `derived:philly:600:0:0.6`, a file or
    directory); `@shared/<path>` is a path under the shared traces directory (`$SCHEDMATE_SHARED_TRACES`)."""
    name: str | None = None
    """The label in the results table (default: the spec)."""
    fmt: str | None = None
    """Trace format for files (default: detected)."""
    options: dict[str, Scalar] = Field(default_factory=dict)
    """Keyword options for the loader or generator (e.g. `target_load: 0.9, cluster_gpus: 256`)."""
    min_gpus: int = Field(default=0, ge=0)
    skip: int = Field(default=0, ge=0)
    take: int | None = Field(default=None, ge=1)
    compress: float = Field(default=1.0, gt=0)
    static: bool = False
    cluster: str | None = None
    """Pins this trace's cluster (the grid's `clusters` axis then does not multiply it)."""
    monitor_interval_s: float | Literal["auto"] | None = None
    """How often log-reading annotators look at running jobs; `auto`: a twentieth of the median job
    duration, at least 300 s (the main table's rule). Default: the grid's, else the annotator's own."""

    @property
    def label(self) -> str:
        return self.name or self.spec


class SweepCell(BaseModel):
    """One replay of a sweep. `spec` holds everything `schedmate replay` would be told (its `trace` is
    the source's spec); `trace` says how the jobs are cut, `load` scales arrival rates (2: twice as many
    arrivals per hour), `annotator_options` are keyword arguments for the annotator's factory and
    `policy_options` (in `spec`) are `KEY=VALUE` options as `schedmate replay -o` takes them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    trace: TraceSource
    spec: ReplaySpec
    load: float = Field(default=1.0, gt=0)
    annotator_options: dict[str, Scalar] = Field(default_factory=dict)
    scheduler_factory: str | None = None
    """`package.module:function` called with the cell, returning the `Scheduler` to replay (default:
    `build_scheduler(policy, placement, **options)`). The factory then owns the policy names and their
    options (e.g. a `consolidate-fifo` that is no registered scheduler): `check()` asks it once for each."""
    collect: str | None = None
    """`package.module:function` called in the worker with (cell, `ReplayResult`), returning a dict:
    scalar values become columns of the cell's row, lists of dicts become rows of a side table of
    that name (`<name>.parquet`, each row tagged with the cell key). Not part of the cell key."""

    def canonical(self) -> dict[str, Any]:
        """The parameters that decide the cell's result, as plain JSON values."""
        return self.model_dump(mode="json", exclude={"spec": {"out"}, "collect": True})

    @property
    def key(self) -> str:
        blob = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def uses_llm(self) -> bool:
        """Whether the cell may call the LLM server (the `schedmate` annotator unless `use_llm` is false)."""
        return self.spec.annotator == "schedmate" and self.annotator_options.get("use_llm") is not False

    def params(self) -> dict[str, Any]:
        """The cell's columns in the results table."""
        s = self.spec
        return {
            "cell": self.key, "trace": self.trace.label, "trace_spec": self.trace.spec, "policy": s.policy,
            "placement": s.placement, "annotator": s.annotator, "cluster": s.cluster, "network": s.network,
            "seed": s.seed, "load": self.load,
            "policy_options": json.dumps(s.policy_options, sort_keys=True),
            "annotator_options": json.dumps(self.annotator_options, sort_keys=True),
            "semantic": bool(s.semantic), "semantic_noise": s.semantic_noise,
        }


PolicyOptions = list[dict[str, Scalar]] | dict[str, list[dict[str, Scalar]]]


class SweepGrid(BaseModel):
    """Axes of a sweep; every combination is one cell (`cells()`).

    `policy_options` is either a list of option dicts applied to every policy, or a mapping
    policy -> list of option dicts (policies it does not name run once, without options): a policy
    that takes no options (all but delay / delay-tuned) can only be given `{}`."""

    model_config = ConfigDict(extra="forbid")
    traces: list[TraceSource] = Field(min_length=1)
    policies: list[str] = Field(default_factory=lambda: ["fifo"], min_length=1)
    placements: list[str | None] = Field(default_factory=lambda: [None], min_length=1)
    annotators: list[str] = Field(default_factory=lambda: ["none"], min_length=1)
    annotator_options: dict[str, dict[str, Scalar]] = Field(default_factory=dict)
    """annotator name -> keyword arguments of its factory (e.g. `schedmate: {use_llm: false}`)."""
    networks: list[str] = Field(default_factory=lambda: ["congested"], min_length=1)
    clusters: list[str] = Field(default_factory=lambda: ["64"], min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    loads: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    policy_options: PolicyOptions = Field(default_factory=lambda: [{}])
    semantic: bool = False
    """Give every cell's jobs code and logs (in the cell's own scratch directory); automatic for `schedmate`."""
    semantic_noise: float = Field(default=0.0, ge=0)
    monitor_interval_s: float | None = Field(default=None, gt=0)
    limit: int | None = Field(default=None, ge=1)
    """Replay only the first N jobs of each (cut) trace."""
    scheduler_factory: str | None = None
    """See `SweepCell.scheduler_factory`."""
    collect: str | None = None
    """See `SweepCell.collect`."""

    @field_validator("traces", mode="before")
    @classmethod
    def _plain_specs(cls, v: Any) -> Any:
        return [{"spec": t} if isinstance(t, str) else t for t in v] if isinstance(v, list) else v

    @field_validator("loads")
    @classmethod
    def _positive_loads(cls, v: list[float]) -> list[float]:
        bad = [x for x in v if x <= 0]
        if bad:
            raise ValueError(f"loads must be > 0, got {bad}")
        return v

    @model_validator(mode="after")
    def _unique_labels(self) -> SweepGrid:
        labels = [t.label for t in self.traces]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise ValueError(f"traces: labels must be unique, repeated: {dup} (give each a `name`)")
        return self

    def check(self) -> None:
        """Raise `GridError` naming the axis and value of anything no cell could run: unknown policies,
        placements, annotators, networks or clusters, and options a policy does not take."""
        from schedmate.annotators import ANNOTATORS
        from schedmate.cluster import parse_cluster
        from schedmate.policies import SCHEDULERS, policy_options
        from schedmate.policies.base import PLACEMENTS
        from schedmate.records import NetworkSpec

        def bad(axis: str, value: object, known: Any) -> GridError:
            return GridError(f"{axis}: unknown value {value!r} (known: {', '.join(sorted(known))})")

        if self.scheduler_factory is None:
            for p in self.policies:
                if p not in SCHEDULERS:
                    raise bad("policies", p, SCHEDULERS)
                for opts in self.options_for(p):
                    try:
                        policy_options(p, option_pairs(opts))
                    except ValueError as e:
                        raise GridError(f"policy_options for {p}: {e}") from None
        if isinstance(self.policy_options, dict):
            for p in self.policy_options:
                if p not in self.policies:
                    raise GridError(f"policy_options: {p!r} is not in policies {self.policies}")
        for pl in self.placements:
            if pl is not None and pl not in PLACEMENTS:
                raise bad("placements", pl, PLACEMENTS)
        for a in [*self.annotators, *self.annotator_options]:
            if a not in ANNOTATORS:
                raise bad("annotators" if a in self.annotators else "annotator_options", a, ANNOTATORS)
        for n in self.networks:
            try:
                NetworkSpec.parse(n)
            except ValueError as e:
                raise GridError(f"networks: {e}") from None
        for what in ("scheduler_factory", "collect"):
            ref = getattr(self, what)
            if ref is not None:
                try:
                    resolve(ref, what)
                except (ValueError, TypeError) as e:
                    raise GridError(str(e)) from None
        if self.scheduler_factory is not None:  # the factory names its policies: ask it once for each
            factory = resolve(self.scheduler_factory, "scheduler_factory")
            seen: set[tuple[str, str]] = set()
            for cell in self.cells():
                which = (cell.spec.policy, json.dumps(cell.spec.policy_options, sort_keys=True))
                if which not in seen:
                    seen.add(which)
                    try:
                        factory(cell)
                    except (ValueError, TypeError, KeyError) as e:
                        raise GridError(f"scheduler_factory for policy {cell.spec.policy!r}: {e}") from None
        for c in {*self.clusters, *(t.cluster for t in self.traces if t.cluster)}:
            try:
                parse_cluster(c, NetworkSpec.parse("ideal"))
            except (ValueError, FileNotFoundError) as e:
                raise GridError(f"clusters: {c!r}: {e}") from None

    def options_for(self, policy: str) -> list[dict[str, Scalar]]:
        if isinstance(self.policy_options, dict):
            return self.policy_options.get(policy) or [{}]
        return self.policy_options or [{}]

    def cells(self) -> list[SweepCell]:
        """Every combination, in axis order (traces outermost, then policies, annotators, ...)."""
        out = []
        for src in self.traces:
            clusters = [src.cluster] if src.cluster else self.clusters
            axes = itertools.product(self.policies, self.placements, self.annotators, clusters, self.networks,
                                     self.seeds, self.loads)
            for policy, placement, annotator, cluster, network, seed, load in axes:
                for opts in self.options_for(policy):
                    monitor = src.monitor_interval_s if src.monitor_interval_s is not None else self.monitor_interval_s
                    spec = ReplaySpec(
                        trace=src.spec, fmt=src.fmt, policy=policy, placement=placement, annotator=annotator,
                        cluster=cluster, network=network, seed=seed, limit=self.limit,
                        semantic=True if self.semantic else None, semantic_noise=self.semantic_noise,
                        monitor_interval_s=monitor if isinstance(monitor, float) else None,
                        policy_options=dict(opts))
                    out.append(SweepCell(trace=src, spec=spec, load=load,
                                         annotator_options=self.annotator_options.get(annotator, {}),
                                         scheduler_factory=self.scheduler_factory, collect=self.collect))
        return out


def load_grids(path: Path | None = None, **axes: Any) -> list[SweepGrid]:
    """The grids of a YAML (or JSON) file, their axes replaced by the non-empty `axes` given (as the CLI's
    options do); errors name the file and the field. A file is one grid (a mapping of axes), or several
    under `grids:` (a list of mappings), each over the file's other keys as defaults: e.g. baselines
    with one annotator and the policies that read annotations with two, in one sweep and one table."""
    data: dict[str, Any] = {}
    source = str(path) if path is not None else "command line"
    if path is not None:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except FileNotFoundError:
            raise GridError(f"{path}: no such grid file") from None
        except yaml.YAMLError as e:
            raise GridError(f"{path}: not valid YAML: {e}") from None
        if not isinstance(data, dict):
            raise GridError(f"{path}: expected a mapping of axes (traces:, policies:, ...), got {type(data).__name__}")
    parts = data.pop("grids", None)
    if parts is not None and (not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts)):
        raise GridError(f"{source}: grids: expected a non-empty list of mappings of axes")
    out = []
    for i, part in enumerate(parts or [{}]):
        merged = {**data, **part, **{k: v for k, v in axes.items() if v}}
        where = f"{source} grids.{i}" if parts else source
        if not merged.get("traces"):
            raise GridError(f"{where}: no traces: give `traces:` in the grid file or at least one --trace")
        out.append(grid_from_dict(merged, source=where))
    return out


def load_grid(path: Path | None = None, **axes: Any) -> SweepGrid:
    """The one grid of a file (see `load_grids`)."""
    grids = load_grids(path, **axes)
    if len(grids) != 1:
        raise GridError(f"{path}: holds {len(grids)} grids; use load_grids")
    return grids[0]


def sweep_cells(grids: SweepGrid | Sequence[SweepGrid]) -> list[SweepCell]:
    """The cells of one grid or several, in order, each once (a cell two grids share runs once)."""
    out: dict[str, SweepCell] = {}
    for g in [grids] if isinstance(grids, SweepGrid) else grids:
        for c in g.cells():
            out.setdefault(c.key, c)
    return list(out.values())


def grid_from_dict(data: dict[str, Any], source: str = "grid") -> SweepGrid:
    try:
        return SweepGrid.model_validate(data)
    except ValidationError as e:
        lines = [f"{source}: {'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}" for err in e.errors()]
        raise GridError("invalid sweep grid:\n  " + "\n  ".join(lines)) from None
