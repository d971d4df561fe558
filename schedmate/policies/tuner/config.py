"""The delay auto-tuner's configuration: period, objective, search grids, snapshot size and budget.

**Objective** (`TunerConfig.objective`, what the operator asks for): `avg_jct`, `p99_jct`, `makespan`, or
a weighted mix of them written `W*NAME+W*NAME` (e.g. `0.5*avg_jct+0.5*p99_jct`). Each is measured over the
jobs of the tuner's window (`schedmate.policies.tuner.forward`); a single one is compared as it is, a mix
as the weighted sum of each metric's ratio to its value under the default knobs on the same window (so
that hours of mean and of tail add up as relative changes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

METRICS = ("avg_jct", "p99_jct", "makespan")
GUARD = "guard"
"""The starvation guard's factor: the knob tuned besides the timer classes (`TunerConfig.tune_guard`)."""


def parse_objective(text: str) -> tuple[tuple[float, str], ...]:
    """`avg_jct`, `p99_jct`, `makespan` or `W*NAME+W*NAME...` -> ((weight, metric), ...); ValueError
    naming what is wrong otherwise."""
    terms = []
    for part in text.replace(" ", "").split("+"):
        weight, star, name = part.rpartition("*")
        try:
            w = float(weight) if star else 1.0
        except ValueError:
            raise ValueError(f"tuner objective {text!r}: weight {weight!r} is not a number") from None
        if name not in METRICS:
            raise ValueError(f"tuner objective {text!r}: {name!r} is not one of {', '.join(METRICS)}")
        if not w > 0 or not math.isfinite(w):
            raise ValueError(f"tuner objective {text!r}: weights must be > 0")
        terms.append((w, name))
    if len({name for _, name in terms}) < len(terms):
        raise ValueError(f"tuner objective {text!r}: a metric appears twice")
    return tuple(terms)


def objective_value(terms: tuple[tuple[float, str], ...], metrics: dict[str, float],
                    default: dict[str, float]) -> float:
    """The objective of a forward run's `metrics`; `default`: the default knobs' on the same window."""
    if len(terms) == 1:
        w, name = terms[0]
        return w * metrics[name]
    return sum(w * (metrics[name] / default[name] if default[name] > 0 else 1.0) for w, name in terms)


@dataclass
class TunerConfig:
    period_s: float = 4 * 3600.0
    """Simulated time between ticks; a tick tunes at most once (see `max_backoff` for skipped ticks)."""
    objective: str = "avg_jct"
    """What the operator asks for: `avg_jct`, `p99_jct`, `makespan` or a weighted mix such as
    `0.5*avg_jct+0.5*p99_jct` (see the module doc)."""
    multipliers: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    """The grid of multiples of the default factors that the search picks from (must include 1.0)."""
    horizon_s: float = 12 * 3600.0
    """Length of a forward run; unfinished jobs are counted as ending after their remaining work."""
    max_waiting: int = 32
    """Waiting jobs in the snapshot (and looked at for held ones), in queue order."""
    max_recent: int = 16
    """Recent arrivals replayed one window forward as the near future."""
    recent_window_s: float = 4 * 3600.0
    search: str = "local"
    """`local`: from the better of the default and the previous choice, per class try both grid
    neighbours and move on in a direction while it improves; `grid`: every multiplier for every class."""
    max_backoff: int = 8
    """After a tune that kept the previous choice, the next waits twice as many periods as the last,
    up to this many (1: every period)."""
    tune_unknown: bool = False
    """Also tune the `unknown` class (no sensitivity from the annotator). Off by default: its forward
    runs would simulate every such job with the assumed default sensitivity, and tuning to that guess
    made philly's average JCT 9-10 % worse than the fixed timers over whole replays (`bench_tuner
    --budget none`, annotator `none`)."""
    tune_guard: bool = False
    """Also tune the starvation guard's `guard_factor` (as `DelayTimers.guard_scale`, a multiple in
    `guard_multipliers`), unless its rule is `age`."""
    guard_multipliers: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, math.inf)
    """Multiples of `guard_factor` the search picks from (must include 1.0; inf: only the age cap)."""
    event_budget: float | None = 0.05
    """Forward runs may use at most this multiple of the replay's own events so far (None: no limit).
    A forward event costs about what a replay event does, so this bounds the tuner's share of the
    replay's wall time deterministically (0.05 leaves room for the snapshots and the per-tick check
    of held jobs within a 10 % share); a tune starts only when the default and one candidate fit."""

    terms: tuple[tuple[float, str], ...] = field(init=False, repr=False)
    """The parsed objective."""

    def __post_init__(self) -> None:
        self.terms = parse_objective(self.objective)
        if self.search not in ("local", "grid"):
            raise ValueError(f"tuner search must be local or grid, got {self.search!r}")
        if 1.0 not in self.multipliers or 1.0 not in self.guard_multipliers:
            raise ValueError("the multipliers must include 1.0 (the fixed default)")
        if self.period_s <= 0 or self.horizon_s <= 0:
            raise ValueError("tuner period and horizon must be > 0")
        if self.max_backoff < 1:
            raise ValueError("max_backoff must be >= 1")


__all__ = ["GUARD", "METRICS", "TunerConfig", "objective_value", "parse_objective"]
