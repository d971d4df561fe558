"""Typed records shared by the simulator, the policies, the adapters and the LLM components.

A `Job` is what a trace says about one job (plus references to its semantic material); an
`Annotation` is what an annotator believes about it. Policies read annotations, never the truth
fields of a job: only the `oracle` annotator reads those.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Outcome(str, Enum):
    """How a job ended in the trace."""

    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"
    timeout = "timeout"


class FailureCategory(str, Enum):
    """Failure classes the log monitor reports; `none` means no failure seen."""

    oom = "oom"
    nccl = "nccl"
    nan = "nan"
    dataloader = "dataloader"
    segfault = "segfault"
    node = "node"
    preempted = "preempted"
    user_code = "user_code"
    hang = "hang"
    other = "other"
    none = "none"


class FailureAction(str, Enum):
    """What a scheduler should do about a failure signal."""

    restart_from_checkpoint = "restart_from_checkpoint"
    cordon_node = "cordon_node"
    reduce_memory = "reduce_memory"
    fix_code = "fix_code"
    nothing = "nothing"


class SemanticRefs(BaseModel):
    """Where a job's semantic material lives; all optional because most traces carry none."""

    model_config = ConfigDict(frozen=True)

    workdir: str | None = None
    command: str | None = None
    log_source: str | None = None
    template: str | None = None
    """Catalogue template the semantic augmentation gave this job, if any."""


class JobFacts:
    """What follows from a job's fields, for `Job` and for the engine's row views (`JobView`) alike."""

    __slots__ = ()

    @property
    def network_sensitivity(self) -> float:
        return sensitivity_from_slowdown(self.spread_slowdown)  # type: ignore[attr-defined]

    @property
    def end_time_hint(self) -> float:
        """Submit + duration: when the job would end with no queueing and no slowdown."""
        return self.submit_time + self.duration_s  # type: ignore[attr-defined]


class Job(JobFacts, BaseModel):
    """One job as a trace records it, plus the ground truth the simulator needs.

    Times are seconds. `duration_s` is the runtime the job needs on a consolidated placement until
    it reaches its `outcome` (the whole run for a completed job, the run until the failure or the
    cancellation otherwise); the simulator stretches it by placement and congestion.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    user: str | None = None
    submit_time: float = Field(ge=0)
    num_gpus: int = Field(ge=0)
    num_nodes: int | None = Field(default=None, ge=1)
    name: str | None = None
    job_type: str | None = None
    vc: str | None = None
    gpu_type: str | None = None
    outcome: Outcome = Outcome.completed
    duration_s: float = Field(ge=0)
    requested_time_s: float | None = Field(default=None, ge=0)
    # Ground truth about the workload; only the simulator and the oracle annotator read these.
    workload: str | None = None
    """Model class used for the default slowdown tables (e.g. `bert`, `resnet50`)."""
    spread_slowdown: float = Field(default=1.0, ge=1.0)
    """True time factor when spread over nodes at full NIC bandwidth (1.0 = insensitive)."""
    failure_category: FailureCategory | None = None
    hang_onset_s: float | None = Field(default=None, ge=0)
    """Consolidated runtime after which a hung job stops making progress (it still runs to duration_s)."""
    semantic: SemanticRefs | None = None


# A job spread over nodes runs at most this many times slower in the published tables
# (Pollux: BERT 2.2-3.7x; Gavel: LM at 0.1-0.35x of consolidated throughput, capped here).
MAX_SPREAD_SLOWDOWN = 4.0


def sensitivity_from_slowdown(slowdown: float) -> float:
    """Map a spread slowdown (>=1) to a network sensitivity in [0, 1]."""
    return max(0.0, min(1.0, (slowdown - 1.0) / (MAX_SPREAD_SLOWDOWN - 1.0)))


def slowdown_from_sensitivity(sensitivity: float) -> float:
    return 1.0 + max(0.0, min(1.0, sensitivity)) * (MAX_SPREAD_SLOWDOWN - 1.0)


class DurationEstimate(BaseModel):
    """Quantiles of a duration in seconds; p10 <= p50 <= p90."""

    model_config = ConfigDict(frozen=True)

    p10: float = Field(ge=0)
    p50: float = Field(ge=0)
    p90: float = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> DurationEstimate:
        if not (self.p10 <= self.p50 <= self.p90):
            raise ValueError(f"quantiles must be ordered, got p10={self.p10} p50={self.p50} p90={self.p90}")
        return self

    @classmethod
    def point(cls, seconds: float) -> DurationEstimate:
        return cls(p10=seconds, p50=seconds, p90=seconds)


class FailureSignal(BaseModel):
    model_config = ConfigDict(frozen=True)

    category: FailureCategory
    failed: bool
    confidence: float = Field(ge=0, le=1)
    action: FailureAction = FailureAction.nothing
    recoverable: bool = False
    onset_line: int | None = None
    root_cause: str | None = None


class Provenance(BaseModel):
    """Which component made an annotation, with which prompt and model."""

    model_config = ConfigDict(frozen=True)

    component: str
    prompt_id: str | None = None
    prompt_version: str | None = None
    model: str | None = None
    llm_calls: int = 0
    latency_s: float = 0.0


class Annotation(BaseModel):
    """What an annotator believes about one job at one moment. Unknown values are None."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    made_at: float = 0.0
    predicted_duration: DurationEstimate | None = None
    predicted_remaining_s: float | None = Field(default=None, ge=0)
    network_sensitivity: float | None = Field(default=None, ge=0, le=1)
    spread_slowdown: float | None = Field(default=None, ge=1)
    failure: FailureSignal | None = None
    provenance: tuple[Provenance, ...] = ()

    @field_validator("provenance", mode="before")
    @classmethod
    def _tuple(cls, v: object) -> object:
        return tuple(v) if isinstance(v, list) else v


# --------------------------------------------------------------------------- cluster


class NodeSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    gpus: int = Field(ge=0)
    gpu_type: str = "V100"
    rack: int = Field(ge=0)


class NetworkSpec(BaseModel):
    """Link model. `ideal` has no contention at all; `congested` shares NICs and oversubscribed uplinks."""

    model_config = ConfigDict(frozen=True)

    contention: bool = True
    uplink_oversubscription: float = Field(default=4.0, ge=1.0)
    """Rack uplink capacity is (nodes in rack x NIC bandwidth) / this ratio."""
    cross_rack_penalty: float = Field(default=1.25, ge=1.0)
    """Extra factor on communication time when a job spans racks (spine hops), even uncontended."""

    @classmethod
    def parse(cls, spec: str) -> NetworkSpec:
        """`ideal`, `congested` (1:4 uplinks) or `congested:R` (1:R uplinks)."""
        spec = spec.strip().lower()
        if spec == "ideal":
            return cls(contention=False, uplink_oversubscription=1.0)
        if spec == "congested":
            return cls()
        if spec.startswith("congested:"):
            try:
                return cls(uplink_oversubscription=float(spec.split(":", 1)[1]))
            except ValueError as e:
                raise ValueError(f"bad network spec {spec!r}: expected congested:<ratio>, e.g. congested:8") from e
        raise ValueError(f"unknown network spec {spec!r}: expected ideal, congested or congested:<ratio>")


class ClusterSpec(BaseModel):
    """GPU -> node -> rack (ToR) -> spine."""

    model_config = ConfigDict(frozen=True)

    nodes: tuple[NodeSpec, ...]
    network: NetworkSpec = NetworkSpec()

    @property
    def total_gpus(self) -> int:
        return sum(n.gpus for n in self.nodes)

    @property
    def num_racks(self) -> int:
        return 1 + max(n.rack for n in self.nodes) if self.nodes else 0

    @classmethod
    def uniform(
        cls,
        num_nodes: int,
        gpus_per_node: int = 8,
        nodes_per_rack: int = 16,
        gpu_type: str = "V100",
        network: NetworkSpec | None = None,
    ) -> ClusterSpec:
        if num_nodes < 1 or gpus_per_node < 1 or nodes_per_rack < 1:
            raise ValueError("a cluster needs at least one node, one GPU per node and one node per rack")
        nodes = tuple(
            NodeSpec(name=f"n{i:04d}", gpus=gpus_per_node, gpu_type=gpu_type, rack=i // nodes_per_rack)
            for i in range(num_nodes)
        )
        return cls(nodes=nodes, network=network or NetworkSpec())
