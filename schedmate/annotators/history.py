"""`history`: duration from the job's most similar finished jobs (retriever + predictor), no LLM.

At submission it embeds the job's name, type and command (digits masked; a code profile's summary when a
`profiles` callable gives one) and asks `DurationPredictor` for p10/p50/p90 (neighbours, user habits,
and a work estimate when a `code_estimates` callable gives one). At a finish it records the job with its
observed run time. It reads nothing else of a job before its finish: not `duration_s`, not `outcome`,
not `workload`.

Store: `memory` by default, fresh at every `reset` (a replay's clock starts at 0, so records from another
replay would sit on a different timeline). `store="chroma"` (with `store_options={"path": ...}` or
`SCHEDMATE_CHROMA_URL`) or a `HistoryStore` instance is never wiped: it is meant for a history that
outlives the process (a live scheduler, whose clock is wall time). For a replay into chroma, give it a
fresh path (as `eval/predict/run.py` does for `history-chroma`), else the replays' timelines mix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedmate.annotators.base import ANNOTATORS, Annotator
from schedmate.history.embed import Embedder
from schedmate.history.predictor import CodeEstimate, DurationPredictor, Prediction, StopHabits
from schedmate.history.records import HistoryRecord, query_text
from schedmate.history.retriever import HistoryRetriever
from schedmate.history.store import STORES, HistoryStore
from schedmate.records import Annotation, Job, Provenance


@ANNOTATORS.register("history")
class HistoryAnnotator(Annotator):
    name = "history"

    def __init__(self, store: str | HistoryStore = "memory", embedder: str | Embedder = "minilm",
                 store_options: dict[str, Any] | None = None,
                 profiles: Callable[[Job], Any] | None = None,
                 code_estimates: Callable[[Job], CodeEstimate | None] | None = None,
                 stop_habits: Callable[[Job], StopHabits | None] | None = None,
                 keep_evidence: bool = False, **retriever_options: Any) -> None:
        self._store_spec = store
        self._embedder = embedder
        self._store_options = dict(store_options or {})
        self.profiles = profiles
        self.code_estimates = code_estimates
        self.stop_habits = stop_habits
        self.keep_evidence = keep_evidence
        self._retriever_options = retriever_options
        self.evidence: dict[str, Prediction] = {}
        """job id -> its submission prediction, while the job is in the system (with the retrieval when
        `keep_evidence`, kept after the finish too), for `refine` and for reports."""
        self.store = self._open()
        self._build()

    def _open(self) -> HistoryStore:
        if isinstance(self._store_spec, HistoryStore):
            return self._store_spec
        return STORES.create(self._store_spec, embedder=self._embedder, **self._store_options)

    def _build(self) -> None:
        self.retriever = HistoryRetriever(self.store, **self._retriever_options)
        self.predictor = DurationPredictor(self.retriever)

    def reset(self, seed: int) -> None:
        self.evidence.clear()
        if self._store_spec == "memory":
            self.store = self._open()  # the embedder's text cache goes with it; cheap to refill
            self._build()

    def _profile(self, job: Job) -> Any:
        return self.profiles(job) if self.profiles is not None else None

    def on_submit(self, job: Job, now: float) -> Annotation:
        code = self.code_estimates(job) if self.code_estimates is not None else None
        stops = self.stop_habits(job) if self.stop_habits is not None else None
        pred = self.predictor.predict(query_text(job, self._profile(job)), job.user, now, job.num_gpus, code, stops)
        self.evidence[job.id] = pred if self.keep_evidence else Prediction(
            pred.estimate, pred.sources, pred.p_early, None, pred.samples)
        return Annotation(
            job_id=job.id, made_at=now, predicted_duration=pred.estimate,
            provenance=(Provenance(component="history:" + ("+".join(pred.sources) or "none")),),
        )

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        if not self.keep_evidence:
            self.evidence.pop(job.id, None)
        result = self.store.add([HistoryRecord.from_job(job, now, runtime_s, self._profile(job))])
        if result.rejected:  # a job the trace let through but history cannot use: say so, keep going
            import sys

            print(f"warning: history: {result.rejected[0]}", file=sys.stderr)
