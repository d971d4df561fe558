"""The two reference annotators: `none` (metadata only) and `oracle` (reads the truth)."""

from __future__ import annotations

from schedmate.annotators.base import ANNOTATORS, Annotator
from schedmate.records import (
    Annotation,
    DurationEstimate,
    FailureAction,
    FailureCategory,
    FailureSignal,
    Job,
    Outcome,
    Provenance,
)


@ANNOTATORS.register("none")
class NoAnnotator(Annotator):
    """What today's schedulers see: user, GPUs, submit time. No duration, no sensitivity."""

    name = "none"
    _provenance = (Provenance(component="none"),)

    def on_submit(self, job: Job, now: float) -> Annotation:
        return Annotation(job_id=job.id, made_at=now, provenance=self._provenance)


_ORACLE_ACTIONS = {
    FailureCategory.oom: FailureAction.reduce_memory,
    FailureCategory.node: FailureAction.cordon_node,
    FailureCategory.nccl: FailureAction.restart_from_checkpoint,
    FailureCategory.hang: FailureAction.restart_from_checkpoint,
    FailureCategory.user_code: FailureAction.fix_code,
    FailureCategory.nan: FailureAction.fix_code,
}


@ANNOTATORS.register("oracle")
class OracleAnnotator(Annotator):
    """Perfect knowledge: the true runtime, the true network sensitivity and the true failure."""

    name = "oracle"

    def on_submit(self, job: Job, now: float) -> Annotation:
        failure = None
        if job.outcome is Outcome.failed:
            cat = job.failure_category or FailureCategory.other
            failure = FailureSignal(
                category=cat, failed=True, confidence=1.0,
                action=_ORACLE_ACTIONS.get(cat, FailureAction.nothing),
                recoverable=cat in (FailureCategory.nccl, FailureCategory.node, FailureCategory.hang),
            )
        return Annotation(
            job_id=job.id,
            made_at=now,
            predicted_duration=DurationEstimate.point(job.duration_s),
            network_sensitivity=job.network_sensitivity,
            spread_slowdown=job.spread_slowdown,
            failure=failure,
            provenance=(Provenance(component="oracle"),),
        )
