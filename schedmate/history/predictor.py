"""Duration prediction at submission, and remaining time while a job runs.

`DurationPredictor(retriever).predict(text, user, now, num_gpus, code=None)` fuses, in log(1 + s):

(a) **work** (`CodeEstimate(total_steps, iteration_time_s, confidence)`, from the code analyzer when it
    profiles the job): a log-normal around `total_steps x iteration_time_s` with
    sigma = 0.15 + 0.6 x (1 - confidence). It describes a run to completion, so it is combined
    (precision-weighted) with a log-normal fitted to the *completed* neighbours when there are 3 or more
    (their sigma floored at 0.5: other jobs, however similar, vary more than their sample says);
(b) **neighbours** from `HistoryRetriever` (or its fallbacks), as a weighted sample;
(c) **user habits**: the share of the user's recent finished jobs that ended early (failed, cancelled,
    timed out), smoothed towards everyone's share (`habit_prior` pseudo-jobs). With a work estimate the
    result is a mixture: (1 - p_early) x the fused full run + p_early x early stops (the early-ended
    neighbours' durations, else log-uniform over 1-100 % of the full run). Without one, the neighbours
    are re-weighted so that their early-ended share equals p_early (once the user has `min_user_jobs`
    finished jobs), which shrinks p10/p50 for users who often stop early and raises them for those
    who do not.

With `stops` (`StopHabits`: how often and at which step fraction runs of this kind ended before their
target, learned from finished jobs' logs) the early part of the mixture is those fractions of the work
estimate instead.

`refine(progress, prediction=None, stops=None)` gives the remaining time of a running job: from the steps left x
the iteration time (measured from `elapsed / current_step` when not given), with a spread that narrows as
the job advances; without step progress, the submission prediction conditioned on having survived
`elapsed`. Both keep the early-stop mixture.

`calibration(predictions, truths)` is the share of truths below p10/p50/p90 (ideal 0.1/0.5/0.9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from schedmate.history.retriever import Evidence, HistoryRetriever, Retrieval, estimate_from_log_samples
from schedmate.records import DurationEstimate, Outcome

Z90 = 1.2815515655446004
_GRID = np.linspace(0.025, 0.975, 39)  # quantile points representing a parametric component


def _norm_ppf(q: np.ndarray) -> np.ndarray:
    """Standard normal quantiles (Acklam's rational approximation; |error| < 1.2e-9)."""
    a = [-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
         -3.066479806614716e01, 2.506628277459239e00]
    b = [-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
         -1.328068155288572e01]
    c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
         4.374664141464968e00, 2.938163982698783e00]
    d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00]
    q = np.asarray(q, dtype=float)
    out = np.empty_like(q)
    lo, hi = q < 0.02425, q > 1 - 0.02425
    mid = ~(lo | hi)
    r = q[mid] - 0.5
    s = r * r
    out[mid] = ((((((a[0] * s + a[1]) * s + a[2]) * s + a[3]) * s + a[4]) * s + a[5]) * r
                / (((((b[0] * s + b[1]) * s + b[2]) * s + b[3]) * s + b[4]) * s + 1))
    for mask, sign in ((lo, 1.0), (hi, -1.0)):
        if mask.any():
            t = np.sqrt(-2 * np.log(q[mask] if sign > 0 else 1 - q[mask]))
            out[mask] = sign * ((((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5])
                                / ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1))
    return out


_NORM_PTS = _norm_ppf(_GRID)


class CodeEstimate(BaseModel):
    """Work estimate from the code analyzer: steps to run and seconds per step."""

    model_config = ConfigDict(frozen=True)

    total_steps: int = Field(gt=0)
    iteration_time_s: float = Field(gt=0)
    confidence: float = Field(default=0.5, ge=0, le=1)

    @property
    def work_s(self) -> float:
        return self.total_steps * self.iteration_time_s


class Progress(BaseModel):
    """How far a running job is (from its logs): step counter, target, iteration time, wall time run."""

    model_config = ConfigDict(frozen=True)

    current_step: int = Field(default=0, ge=0)
    total_steps: int | None = Field(default=None, gt=0)
    iteration_time_s: float | None = Field(default=None, gt=0)
    elapsed_s: float = Field(ge=0)


@dataclass(frozen=True)
class StopHabits:
    """Where runs end relative to their configured steps, learned from finished jobs' logs (the log
    shows the last step and the target): `p_stop` the (user-smoothed) share of runs that ended before
    their target (stopped early, failed, cancelled), `fractions` the step fractions (0, 1) at which
    those runs ended."""

    p_stop: float
    fractions: np.ndarray

    MIN_FRACTIONS = 5
    """Fewer ended-early runs than this: too little to describe where runs end; not used."""

    def usable(self) -> bool:
        return len(self.fractions) >= self.MIN_FRACTIONS


@dataclass
class Prediction:
    estimate: DurationEstimate | None
    sources: list[str]
    """What went in: `work`, `neighbors`/`user_recent`/`global`, `habits`."""
    p_early: float | None = None
    retrieval: Retrieval | None = None
    samples: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    """(log1p seconds, weights) of the final distribution, for `refine`."""


def _early(o: Outcome) -> bool:
    return o is not Outcome.completed


class DurationPredictor:
    def __init__(self, retriever: HistoryRetriever, habit_window: int = 20, habit_prior: float = 5.0,
                 min_user_jobs: int = 3) -> None:
        self.retriever = retriever
        self.store = retriever.store
        self.habit_window = habit_window
        self.habit_prior = habit_prior
        self.min_user_jobs = min_user_jobs

    # ------------------------------------------------------------------ habits
    def early_stop_rate(self, user: str | None, now: float) -> tuple[float | None, int]:
        """(smoothed share of the user's recent jobs that ended early, how many jobs it rests on)."""
        n_all, early_all = self.store.outcome_stats(now, self.retriever.prior_k)
        if n_all == 0:
            return None, 0
        base = early_all / n_all
        n, early = self.store.outcome_stats(now, self.habit_window, user=user) if user is not None else (0, 0)
        return (early + self.habit_prior * base) / (n + self.habit_prior), n

    # ------------------------------------------------------------------ submission
    def predict(self, text: str, user: str | None, now: float, num_gpus: int | None = None,
                code: CodeEstimate | None = None, stops: StopHabits | None = None) -> Prediction:
        ret = self.retriever.estimate(text, user, now, num_gpus)
        p_early, n_user = self.early_stop_rate(user, now)
        sources = [ret.source] if ret.estimate is not None else []
        if code is None:
            if ret.estimate is None:
                return Prediction(None, [], p_early, ret)
            logs, w = ret.log_samples()
            if p_early is not None and n_user >= self.min_user_jobs:
                w = self._reweight(ret.evidence, w, p_early)
                sources.append("habits")
            return Prediction(estimate_from_log_samples(logs, w), sources, p_early, ret, (logs, w))
        # (a) work, fused with the completed neighbours
        mu, sigma = math.log1p(code.work_s), 0.15 + 0.6 * (1.0 - code.confidence)
        done = [e for e in ret.evidence if not _early(e.outcome)]
        if len(done) >= 3:
            lg = np.log1p([e.duration_s for e in done])
            ww = np.array([e.weight for e in done])
            m = float(np.average(lg, weights=ww))
            s = max(0.5, float(np.sqrt(np.average((lg - m) ** 2, weights=ww))))
            prec = 1 / sigma**2 + 1 / s**2
            mu, sigma = (mu / sigma**2 + m / s**2) / prec, math.sqrt(1 / prec)
        full_logs = mu + sigma * _NORM_PTS
        sources = ["work"] + sources
        if stops is not None and stops.usable():  # where runs of this kind really end, from their logs
            pe = stops.p_stop
            logs = np.concatenate([full_logs, np.log1p(np.expm1(mu) * stops.fractions)])
            w = np.concatenate([np.full(len(full_logs), (1.0 - pe) / len(full_logs)),
                                np.full(len(stops.fractions), pe / len(stops.fractions))])
            sources.append("stops")
            return Prediction(estimate_from_log_samples(logs, w), sources, pe, ret, (logs, w))
        pe = p_early if p_early is not None else 0.0
        logs, w = full_logs, np.full(len(full_logs), (1.0 - pe) / len(full_logs))
        if pe > 0:
            early_ev = [e for e in ret.evidence if _early(e.outcome)]
            if early_ev:
                el = np.log1p([e.duration_s for e in early_ev])
                ew = np.array([e.weight for e in early_ev])
            else:  # log-uniform over 1 %..100 % of the full run's median
                el = np.log1p(np.expm1(mu) * np.logspace(-2, 0, 21))
                ew = np.ones(21)
            logs = np.concatenate([logs, el])
            w = np.concatenate([w, pe * ew / ew.sum()])
            sources.append("habits")
        return Prediction(estimate_from_log_samples(logs, w), sources, p_early, ret, (logs, w))

    @staticmethod
    def _reweight(ev: list[Evidence], w: np.ndarray, p_early: float) -> np.ndarray:
        early = np.array([_early(e.outcome) for e in ev])
        we, wc = w[early].sum(), w[~early].sum()
        if we == 0 or wc == 0:  # one class only: nothing to re-balance
            return w
        return np.where(early, w * p_early / we, w * (1 - p_early) / wc)

    # ------------------------------------------------------------------ running
    def refine(self, progress: Progress, prediction: Prediction | None = None,
               stops: StopHabits | None = None) -> DurationEstimate | None:
        """Remaining seconds (p10/p50/p90) of a running job; None when nothing is known. With `stops`,
        the run may still end before its target where runs of its kind ended, given that it is past
        its current step (Bayes: the share of early ends still ahead, against finishing)."""
        it = progress.iteration_time_s
        if it is None and progress.current_step > 0:
            it = progress.elapsed_s / progress.current_step
        p_early = prediction.p_early if prediction is not None and prediction.p_early is not None else 0.0
        if progress.total_steps is not None and it is not None:
            left = max(0, progress.total_steps - progress.current_step)
            rem = left * it
            frac = min(1.0, progress.current_step / progress.total_steps)
            sigma = 0.05 + 0.35 * (1.0 - frac)
            logs = np.log1p(rem * np.exp(sigma * _NORM_PTS))
            if stops is not None and stops.usable() and rem > 0:
                ahead = stops.fractions[stops.fractions > frac]
                q = stops.p_stop * len(ahead) / len(stops.fractions)
                p_ahead = q / (q + 1.0 - stops.p_stop) if q > 0 else 0.0
                w = np.full(len(logs), (1.0 - p_ahead) / len(logs))
                if p_ahead > 0:
                    end_rem = (ahead - frac) * progress.total_steps * it
                    logs = np.concatenate([logs, np.log1p(end_rem)])
                    w = np.concatenate([w, np.full(len(ahead), p_ahead / len(ahead))])
                return estimate_from_log_samples(logs, w)
            w = np.full(len(logs), (1.0 - p_early) / len(logs))
            if p_early > 0 and rem > 0:  # it may still stop early: anywhere in what is left
                el = np.log1p(rem * np.logspace(-2, 0, 21))
                logs = np.concatenate([logs, el])
                w = np.concatenate([w, np.full(21, p_early / 21)])
            return estimate_from_log_samples(logs, w)
        if prediction is None or prediction.samples is None:
            return None
        logs, w = prediction.samples  # the submission distribution, given that it has run `elapsed`
        d = np.expm1(logs)
        alive = d > progress.elapsed_s
        if not alive.any() or w[alive].sum() <= 0:
            return DurationEstimate.point(0.0)
        return estimate_from_log_samples(np.log1p(d[alive] - progress.elapsed_s), w[alive])


def calibration(predictions: list[DurationEstimate | None], truths: list[float]) -> dict[str, float]:
    """Share of truths below p10 / p50 / p90 over jobs with a prediction, and the coverage."""
    pairs = [(p, t) for p, t in zip(predictions, truths, strict=True) if p is not None]
    if not pairs:
        return {"coverage": 0.0, "below_p10": math.nan, "below_p50": math.nan, "below_p90": math.nan}
    t = np.array([x[1] for x in pairs])
    return {
        "coverage": len(pairs) / len(truths),
        "below_p10": float(np.mean(t < np.array([x[0].p10 for x in pairs]))),
        "below_p50": float(np.mean(t < np.array([x[0].p50 for x in pairs]))),
        "below_p90": float(np.mean(t < np.array([x[0].p90 for x in pairs]))),
    }
