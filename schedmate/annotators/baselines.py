"""Duration-estimate baselines from the literature, all learning only in `on_finish`.

* `lastk`: mean of the user's last k (=5) run times (p10/p90: their min/max); a user with no finished
  job gets everyone's last k (the provenance says `lastk:global`).
* `requested`: the user's requested time limit where the trace has one (`requested_time_s`), as a point;
  otherwise no estimate.
* `lucid`: a gradient-boosted model (sklearn `HistGradientBoostingRegressor`, log run time) on metadata
  only: user, GPUs, hour of submission, VC, job type (after Lucid, ASPLOS'23).
* `helios`: a combined estimator (after Helios' QSSF, SC'21): the mean log run time of jobs with the
  same name (digits masked; the user's own first), the user's mean, and a boosted model on metadata plus
  those two; combined in log space with weights 1 / (recent held-out squared log error) of each part.

The boosted models are refit on every job finished so far at 100, 200 and 400 finished jobs, then every
`refit_every` (500); before the first fit they fall back to the median of all finished jobs.
p10/p90 of `lucid` and `helios` come from the held-out errors of their own past predictions: each
prediction made at submission is compared with the run time when the job finishes (log ratio, last
`residual_window` jobs); until 30 are known, p10/p90 = p50 / 4 and p50 x 4.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from schedmate.annotators.base import ANNOTATORS, Annotator
from schedmate.history.records import mask_digits
from schedmate.records import Annotation, DurationEstimate, Job, Provenance


def _ann(job: Job, now: float, est: DurationEstimate | None, component: str) -> Annotation:
    return Annotation(job_id=job.id, made_at=now, predicted_duration=est, provenance=(Provenance(component=component),))


@ANNOTATORS.register("lastk")
class LastKAnnotator(Annotator):
    name = "lastk"

    def __init__(self, k: int = 5) -> None:
        self.k = k
        self.reset(0)

    def reset(self, seed: int) -> None:
        self._user: dict[str | None, deque[float]] = {}
        self._all: deque[float] = deque(maxlen=self.k)

    def on_submit(self, job: Job, now: float) -> Annotation:
        hist, comp = self._user.get(job.user), "lastk"
        if not hist:
            hist, comp = self._all, "lastk:global"
        if not hist:
            return _ann(job, now, None, "lastk:none")
        xs = list(hist)
        return _ann(job, now, DurationEstimate(p10=min(xs), p50=float(np.mean(xs)), p90=max(xs)), comp)

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        self._user.setdefault(job.user, deque(maxlen=self.k)).append(runtime_s)
        self._all.append(runtime_s)


@ANNOTATORS.register("requested")
class RequestedTimeAnnotator(Annotator):
    name = "requested"

    def on_submit(self, job: Job, now: float) -> Annotation:
        if job.requested_time_s is None:
            return _ann(job, now, None, "requested:none")
        return _ann(job, now, DurationEstimate.point(job.requested_time_s), "requested")


class _Residuals:
    """Held-out log errors of past predictions -> p10/p90 around a p50."""

    def __init__(self, window: int = 2000, min_n: int = 30) -> None:
        self.res: deque[float] = deque(maxlen=window)
        self.min_n = min_n
        self._q: tuple[float, float] | None = None

    def add(self, log_pred: float, runtime_s: float) -> None:
        self.res.append(float(np.log1p(runtime_s)) - log_pred)
        self._q = None

    def estimate(self, log_p50: float) -> DurationEstimate:
        if len(self.res) < self.min_n:
            lo, hi = -np.log(4.0), np.log(4.0)
        else:
            if self._q is None:
                q = np.quantile(np.fromiter(self.res, float), [0.1, 0.9])
                self._q = (min(0.0, float(q[0])), max(0.0, float(q[1])))
            lo, hi = self._q
        p50 = max(0.0, float(np.expm1(log_p50)))
        # log ratios are applied to (1 + s), as they were measured
        return DurationEstimate(p10=min(p50, max(0.0, float(np.expm1(log_p50 + lo)))), p50=p50,
                                p90=max(p50, float(np.expm1(log_p50 + hi))))


class _Codes:
    """Category -> small integer code (the most frequent 250 values; the rest and None are missing)."""

    def __init__(self, values: list[Any], max_codes: int = 250) -> None:
        counts: dict[Any, int] = {}
        for v in values:
            if v is not None:
                counts[v] = counts.get(v, 0) + 1
        top = sorted(counts, key=lambda v: (-counts[v], str(v)))[:max_codes]
        self.code = {v: i for i, v in enumerate(sorted(top, key=str))}

    def __call__(self, v: Any) -> float:
        c = self.code.get(v)
        return np.nan if c is None else float(c)


CATEGORICAL = ("user", "vc", "job_type")


def _meta(job: Job) -> dict[str, Any]:
    return {"user": job.user, "vc": job.vc, "job_type": job.job_type, "num_gpus": float(job.num_gpus),
            "hour": float((job.submit_time % 86400.0) // 3600.0)}


class _Boosted:
    """Online HistGradientBoostingRegressor on log1p(run time), refit on a schedule."""

    def __init__(self, numeric: tuple[str, ...], refit_every: int = 500, max_train: int = 20000, seed: int = 0) -> None:
        self.numeric = numeric
        self.refit_every = refit_every
        self.max_train = max_train
        self.seed = seed
        self.rows: list[dict[str, Any]] = []
        self.y: list[float] = []
        self.model = None
        self.codes: dict[str, _Codes] = {}
        self.fitted_at = 0

    def _due(self) -> bool:
        n = len(self.rows)
        if n < 100:
            return False
        if self.fitted_at < 400:
            return n >= max(100, 2 * self.fitted_at)
        return n - self.fitted_at >= self.refit_every

    def _matrix(self, rows: list[dict[str, Any]]) -> np.ndarray:
        cols = [[self.codes[c](r[c]) for r in rows] for c in CATEGORICAL]
        cols += [[r[c] if r[c] is not None else np.nan for r in rows] for c in self.numeric]
        return np.array(cols, dtype=float).T

    def observe(self, row: dict[str, Any], runtime_s: float) -> None:
        self.rows.append(row)
        self.y.append(float(np.log1p(runtime_s)))
        if self._due():
            self._fit()

    def _fit(self) -> None:
        from sklearn.ensemble import HistGradientBoostingRegressor
        from threadpoolctl import threadpool_limits

        rows, y = self.rows[-self.max_train:], np.array(self.y[-self.max_train:])
        self.codes = {c: _Codes([r[c] for r in rows]) for c in CATEGORICAL}
        x = self._matrix(rows)
        cat = [i < len(CATEGORICAL) for i in range(x.shape[1])]
        model = HistGradientBoostingRegressor(max_iter=60, learning_rate=0.1, max_leaf_nodes=15, min_samples_leaf=20,
                                              categorical_features=cat, early_stopping=False,
                                              random_state=self.seed)
        with threadpool_limits(1):  # small fits: threads only add contention (and nondeterministic timing)
            self.model = model.fit(x, y)
        self.trees = FastTrees(self.model)
        self.fitted_at = len(self.rows)

    def predict(self, row: dict[str, Any]) -> float | None:
        if self.model is None:
            return None
        return self.trees.predict_one(self._matrix([row])[0].tolist())


class FastTrees:
    """One-row prediction of a fitted HistGradientBoostingRegressor in plain Python.

    sklearn's `predict` costs 10-40 ms per call on a busy 2-core machine (input checks, OpenMP start);
    a replay predicts one job at a time, so the trees are walked here instead (about 0.1 ms). It follows
    sklearn's rules: NaN goes where `missing_go_to_left` says, a categorical split sends the categories
    in its bitset left, a numeric one sends x <= threshold left. A test checks it against `predict`.
    """

    def __init__(self, model: Any) -> None:
        self.baseline = float(np.ravel(model._baseline_prediction)[0])
        self.trees = []
        for (pred,) in model._predictors:
            n = pred.nodes
            self.trees.append((n["feature_idx"].tolist(), n["num_threshold"].tolist(),
                               n["missing_go_to_left"].tolist(), n["left"].tolist(), n["right"].tolist(),
                               n["is_leaf"].tolist(), n["is_categorical"].tolist(), n["bitset_idx"].tolist(),
                               n["value"].tolist(), pred.raw_left_cat_bitsets.tolist()))

    def predict_one(self, x: list[float]) -> float:
        total = self.baseline
        for feat, thr, mleft, left, right, leaf, iscat, bidx, value, bitsets in self.trees:
            i = 0
            while not leaf[i]:
                v = x[feat[i]]
                if math.isnan(v):
                    go_left = mleft[i]
                elif iscat[i]:
                    c = int(v)
                    go_left = 0 <= c < 256 and (bitsets[bidx[i]][c >> 5] >> (c & 31)) & 1
                else:
                    go_left = v <= thr[i]
                i = left[i] if go_left else right[i]
            total += value[i]
        return total


class _BoostedAnnotator(Annotator):
    numeric: tuple[str, ...] = ("num_gpus", "hour")

    def __init__(self, refit_every: int = 500, residual_window: int = 2000) -> None:
        self.refit_every = refit_every
        self.residual_window = residual_window
        self.reset(0)

    def reset(self, seed: int) -> None:
        self.boosted = _Boosted(self.numeric, self.refit_every, seed=seed)
        self.residuals = _Residuals(self.residual_window)
        self.pending: dict[str, Any] = {}
        self._all_logs: list[float] = []
        self._median: float | None = None

    def _global_median(self) -> float | None:
        if self._median is None and self._all_logs:
            self._median = float(np.median(self._all_logs[-5000:]))
        return self._median

    def _learn(self, runtime_s: float) -> None:
        self._all_logs.append(float(np.log1p(runtime_s)))
        self._median = None


@ANNOTATORS.register("lucid")
class LucidAnnotator(_BoostedAnnotator):
    name = "lucid"

    def on_submit(self, job: Job, now: float) -> Annotation:
        row = _meta(job)
        pred, comp = self.boosted.predict(row), "lucid"
        if pred is None:
            pred, comp = self._global_median(), "lucid:median"
        if pred is None:
            return _ann(job, now, None, "lucid:none")
        self.pending[job.id] = (row, pred)
        return _ann(job, now, self.residuals.estimate(pred), comp)

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        row, pred = self.pending.pop(job.id, (None, None))
        if pred is not None:
            self.residuals.add(pred, runtime_s)
        self._learn(runtime_s)
        self.boosted.observe(row if row is not None else _meta(job), runtime_s)


@ANNOTATORS.register("helios")
class HeliosAnnotator(_BoostedAnnotator):
    name = "helios"
    numeric = ("num_gpus", "hour", "name_mean", "user_mean")
    PARTS = ("name", "user", "gbdt")

    def __init__(self, refit_every: int = 500, residual_window: int = 2000, history: int = 10,
                 error_window: int = 500) -> None:
        self.history = history
        self.error_window = error_window
        super().__init__(refit_every, residual_window)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self._by_user_name: dict[tuple[str | None, str], deque[float]] = {}
        self._by_name: dict[str, deque[float]] = {}
        self._by_user: dict[str | None, deque[float]] = {}
        self._errors = {p: deque(maxlen=self.error_window) for p in self.PARTS}

    @staticmethod
    def _name(job: Job) -> str | None:
        return mask_digits(job.name) if job.name else None

    def _parts(self, job: Job) -> tuple[dict[str, float], dict[str, Any]]:
        parts: dict[str, float] = {}
        name = self._name(job)
        if name is not None:
            h = self._by_user_name.get((job.user, name)) or self._by_name.get(name)
            if h:
                parts["name"] = float(np.mean(h))
        h = self._by_user.get(job.user)
        if h:
            parts["user"] = float(np.mean(h))
        row = _meta(job) | {"name_mean": parts.get("name"), "user_mean": parts.get("user")}
        g = self.boosted.predict(row)
        if g is not None:
            parts["gbdt"] = g
        return parts, row

    def _weight(self, part: str) -> float:
        e = self._errors[part]
        return 1.0 / (float(np.mean(e)) + 0.05) if len(e) >= 10 else 1.0

    def on_submit(self, job: Job, now: float) -> Annotation:
        parts, row = self._parts(job)
        if parts:
            ws = {p: self._weight(p) for p in parts}
            pred = sum(ws[p] * v for p, v in parts.items()) / sum(ws.values())
            comp = "helios:" + "+".join(sorted(parts))
        else:
            pred, comp = self._global_median(), "helios:median"
        if pred is None:
            return _ann(job, now, None, "helios:none")
        self.pending[job.id] = (row, parts, pred)
        return _ann(job, now, self.residuals.estimate(pred), comp)

    def on_finish(self, job: Job, now: float, runtime_s: float) -> None:
        y = float(np.log1p(runtime_s))
        row, parts, pred = self.pending.pop(job.id, (None, {}, None))
        if pred is not None:
            self.residuals.add(pred, runtime_s)
        for p, v in parts.items():
            self._errors[p].append((y - v) ** 2)
        self._learn(runtime_s)
        if row is None:  # finished without a submission annotation (not in a replay): learn from metadata
            row = _meta(job) | {"name_mean": None, "user_mean": None}
        self.boosted.observe(row, runtime_s)
        name = self._name(job)
        if name is not None:
            self._by_user_name.setdefault((job.user, name), deque(maxlen=self.history)).append(y)
            self._by_name.setdefault(name, deque(maxlen=self.history)).append(y)
        self._by_user.setdefault(job.user, deque(maxlen=self.history)).append(y)
