"""Auto-tuner for the delay scheduler's timers: simulation in the loop.

Every `period_s` of simulated time the tuner (`search.DelayTuner`, the `Scheduler.on_tick` hook)
snapshots what the scheduler may know (`snapshot`), replays it forward under candidate timers
(`forward`) and keeps the candidate with the best objective (`config.TunerConfig.objective`), never
worse than the default on the snapshot. Its cost is bounded deterministically by an event budget.
"""

from __future__ import annotations

from schedmate.policies.tuner.config import TunerConfig
from schedmate.policies.tuner.forward import evaluate
from schedmate.policies.tuner.search import DelayTuner
from schedmate.policies.tuner.snapshot import Snapshot, snapshot

__all__ = ["DelayTuner", "Snapshot", "TunerConfig", "evaluate", "snapshot"]
