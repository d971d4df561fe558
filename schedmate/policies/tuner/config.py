"""The delay auto-tuner's configuration: period, objective, search grid, snapshot size and budget."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TunerConfig:
    period_s: float = 4 * 3600.0
    """Simulated time between ticks; a tick tunes at most once (see `max_backoff` for skipped ticks)."""
    objective: str = "avg_jct"
    """`avg_jct` or `makespan`."""
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
    event_budget: float | None = 0.05
    """Forward runs may use at most this multiple of the replay's own events so far (None: no limit).
    A forward event costs about what a replay event does, so this bounds the tuner's share of the
    replay's wall time deterministically (0.05 leaves room for the snapshots and the per-tick check
    of held jobs within a 10 % share); a tune starts only when the default and one candidate fit."""

    def __post_init__(self) -> None:
        if self.objective not in ("avg_jct", "makespan"):
            raise ValueError(f"tuner objective must be avg_jct or makespan, got {self.objective!r}")
        if self.search not in ("local", "grid"):
            raise ValueError(f"tuner search must be local or grid, got {self.search!r}")
        if 1.0 not in self.multipliers:
            raise ValueError("the multipliers must include 1.0 (the fixed default)")
        if self.period_s <= 0 or self.horizon_s <= 0:
            raise ValueError("tuner period and horizon must be > 0")
        if self.max_backoff < 1:
            raise ValueError("max_backoff must be >= 1")


__all__ = ["TunerConfig"]
