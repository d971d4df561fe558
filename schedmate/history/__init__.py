"""Job history: a store of finished jobs, a nearest-neighbour retriever and a duration predictor.

    from schedmate.history import open_store, HistoryRecord, HistoryRetriever, DurationPredictor, CodeEstimate

    store = open_store("memory", embedder="minilm")        # or "chroma" (persistent / shared server)
    store.add([HistoryRecord.from_job(job, end_time, runtime_s)])   # -> AddResult(accepted, rejected)
    pred = DurationPredictor(HistoryRetriever(store)).predict(query_text(new_job), new_job.user, now,
                                                              new_job.num_gpus, code=CodeEstimate(...))
    pred.estimate            # DurationEstimate(p10, p50, p90), or None with no history at all
    pred.retrieval.evidence  # the neighbours (job id, duration, similarity, weight, same user)

Modules: `records` (HistoryRecord, the embedded text), `embed` (`minilm` | `hashed` embedders),
`store` (`memory` | `chroma` backends; leakage filter end_time < now; batched idempotent upserts;
validation per record), `retriever` (weighted quantiles over neighbours, fallback chain), `predictor`
(work estimate + neighbours + user habits; `refine` while running; `calibration`).

Which backend when:

| situation | store | embedder |
|---|---|---|
| trace replays up to ~10k jobs (the `history` annotator's default) | `memory` | `minilm` |
| 100k-job replays, or no model installed | `memory` | `hashed` |
| a live scheduler keeping history across restarts | `chroma` (PersistentClient, `$SCHEDMATE_HOME/history`) | `minilm` |
| several schedulers sharing one history | `chroma` with `SCHEDMATE_CHROMA_URL=http://host:port` | `minilm` |

The annotators built on it (`history`, and the baselines `helios`, `lucid`, `lastk`, `requested`) live in
`schedmate.annotators.history` and `schedmate.annotators.baselines`; `eval/predict/run.py` measures them.
"""

from schedmate.history.embed import EMBEDDERS, EmbeddingModelMissing, HashedEmbedder, MiniLMEmbedder
from schedmate.history.predictor import CodeEstimate, DurationPredictor, Prediction, Progress, calibration
from schedmate.history.records import HistoryRecord, job_text, mask_digits, query_text
from schedmate.history.retriever import Evidence, HistoryRetriever, Retrieval, weighted_quantile
from schedmate.history.store import (
    STORES,
    AddResult,
    ChromaStore,
    HistoryStore,
    MemoryStore,
    Neighbor,
    RejectedRecord,
    StoreUnavailable,
    open_store,
)

__all__ = [
    "EMBEDDERS",
    "STORES",
    "AddResult",
    "ChromaStore",
    "CodeEstimate",
    "DurationPredictor",
    "EmbeddingModelMissing",
    "Evidence",
    "HashedEmbedder",
    "HistoryRecord",
    "HistoryRetriever",
    "HistoryStore",
    "MemoryStore",
    "MiniLMEmbedder",
    "Neighbor",
    "Prediction",
    "Progress",
    "RejectedRecord",
    "Retrieval",
    "StoreUnavailable",
    "calibration",
    "job_text",
    "mask_digits",
    "open_store",
    "query_text",
    "weighted_quantile",
]
