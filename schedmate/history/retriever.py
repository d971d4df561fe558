"""Nearest finished jobs -> a duration estimate with p10/p50/p90, and the evidence behind it.

`HistoryRetriever(store).estimate(text, user, now, num_gpus)`:

1. neighbours: the user's own most similar finished jobs first (up to `k`), then everyone's to fill
   up to `k`; only records with similarity >= `min_similarity`, only jobs finished before `now`;
2. weights: `similarity ** sharpness`, x `same_user_bonus` for the user's own jobs, x `gpu_match_bonus`
   when the GPU count is the same;
3. p10/p50/p90: weighted quantiles of log(1 + duration) (`weighted_quantile`), mapped back.

Fallback chain when fewer than `min_neighbors` neighbours qualify: the user's `recent_k` most recent
finished jobs (source `user_recent`, at least 2), then the last `prior_k` finished jobs of everyone
(source `global`), then nothing (`estimate=None`). `Retrieval.evidence` keeps every record used with
its weight, whatever the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from schedmate.history.records import HistoryRecord
from schedmate.history.store import HistoryStore
from schedmate.records import DurationEstimate, Outcome


def weighted_quantile(values, weights, qs) -> np.ndarray:
    """Quantiles of a weighted sample, interpolated between weighted midpoints.

    Sorted values v_i with weights w_i (W = sum) sit at positions p_i = (sum_{j<i} w_j + w_i / 2) / W;
    quantile q interpolates linearly between them and is clamped to the extremes outside [p_1, p_n].
    Equal weights give the usual midpoint-rule quantile (median of 1,2,3,4 is 2.5); zero-weight
    values are ignored. Raises ValueError on empty input, negative weights or all-zero weights.
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    if v.ndim != 1 or v.shape != w.shape:
        raise ValueError("values and weights must be 1-d and the same length")
    if len(v) == 0:
        raise ValueError("no values")
    if (w < 0).any() or not np.isfinite(w).all() or not np.isfinite(v).all():
        raise ValueError("weights must be finite and >= 0, values finite")
    keep = w > 0
    if not keep.any():
        raise ValueError("all weights are zero")
    v, w = v[keep], w[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    pos = (np.cumsum(w) - w / 2) / w.sum()
    return np.interp(np.asarray(qs, dtype=float), pos, v)


def estimate_from_log_samples(logs, weights) -> DurationEstimate:
    p10, p50, p90 = np.expm1(weighted_quantile(logs, weights, [0.1, 0.5, 0.9]))
    p10, p50, p90 = (max(0.0, float(x)) for x in (p10, p50, p90))
    return DurationEstimate(p10=p10, p50=max(p10, p50), p90=max(p10, p50, p90))


@dataclass(frozen=True)
class Evidence:
    job_id: str
    user: str | None
    duration_s: float
    outcome: Outcome
    similarity: float | None
    weight: float
    same_user: bool


@dataclass
class Retrieval:
    estimate: DurationEstimate | None
    source: str
    """`neighbors`, `user_recent`, `global` or `none`."""
    evidence: list[Evidence] = field(default_factory=list)

    def log_samples(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.log1p([e.duration_s for e in self.evidence]), np.array([e.weight for e in self.evidence]))


class HistoryRetriever:
    def __init__(self, store: HistoryStore, k: int = 32, min_neighbors: int = 3, min_similarity: float = 0.5,
                 sharpness: float = 4.0, same_user_bonus: float = 2.0, gpu_match_bonus: float = 1.5,
                 recent_k: int = 10, prior_k: int = 500) -> None:
        self.store = store
        self.k = k
        self.min_neighbors = min_neighbors
        self.min_similarity = min_similarity
        self.sharpness = sharpness
        self.same_user_bonus = same_user_bonus
        self.gpu_match_bonus = gpu_match_bonus
        self.recent_k = recent_k
        self.prior_k = prior_k

    def neighbors(self, text: str, user: str | None, now: float) -> list[tuple[HistoryRecord, float, bool]]:
        """(record, similarity, same_user): the user's own first, then everyone's, up to k."""
        out: list[tuple[HistoryRecord, float, bool]] = []
        seen: set[str] = set()
        if user is not None:
            for n in self.store.query(text, now, self.k, user=user, min_similarity=self.min_similarity):
                out.append((n.record, n.similarity, True))
                seen.add(n.record.job_id)
        if len(out) < self.k:
            for n in self.store.query(text, now, self.k + len(out), min_similarity=self.min_similarity):
                if n.record.job_id in seen:
                    continue
                out.append((n.record, n.similarity, user is not None and n.record.user == user))
                seen.add(n.record.job_id)
                if len(out) >= self.k:
                    break
        return out

    def estimate(self, text: str, user: str | None, now: float, num_gpus: int | None = None) -> Retrieval:
        nbrs = self.neighbors(text, user, now)
        if len(nbrs) >= self.min_neighbors:
            ev = []
            for r, s, same in nbrs:
                w = max(s, 1e-6) ** self.sharpness
                if same:
                    w *= self.same_user_bonus
                if num_gpus is not None and r.num_gpus == num_gpus:
                    w *= self.gpu_match_bonus
                ev.append(Evidence(r.job_id, r.user, r.duration_s, r.outcome, s, w, same))
            return self._finish(ev, "neighbors")
        if user is not None:
            mine = self.store.recent(now, self.recent_k, user=user)
            if len(mine) >= 2:
                return self._finish([Evidence(r.job_id, r.user, r.duration_s, r.outcome, None, 1.0, True)
                                     for r in mine], "user_recent")
        everyone = self.store.recent(now, self.prior_k)
        if everyone:
            return self._finish([Evidence(r.job_id, r.user, r.duration_s, r.outcome, None, 1.0, r.user == user)
                                 for r in everyone], "global")
        return Retrieval(None, "none")

    @staticmethod
    def _finish(ev: list[Evidence], source: str) -> Retrieval:
        logs = np.log1p([e.duration_s for e in ev])
        return Retrieval(estimate_from_log_samples(logs, [e.weight for e in ev]), source, ev)
