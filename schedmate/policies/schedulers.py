"""Named schedulers: a queue order, a default placement and preemption, composed.

`--policy NAME` picks one; `--placement NAME` overrides its placement. Every scheduler takes the
same arguments, so any order composes with any placement (including `delay`).
"""

from __future__ import annotations

from collections.abc import Callable

from schedmate.policies.base import ORDERS, PLACEMENTS, PREEMPTIONS
from schedmate.registry import Registry
from schedmate.policies.base import Scheduler

SCHEDULERS: Registry[Scheduler] = Registry("scheduling policy")

_DEFAULTS: dict[str, tuple[str, str | None]] = {
    # name: (order, preemption)
    "fifo": ("fifo", None),
    "sjf": ("sjf", None),
    "srtf": ("srtf", "priority"),
    "qssf": ("qssf", None),
    "tiresias": ("tiresias", "priority"),
}


def _factory(name: str, order: str, preemption: str | None) -> Callable[..., Scheduler]:
    def make(placement: str | None = None, **_: object) -> Scheduler:
        place = placement or "consolidate"
        return Scheduler(
            order=ORDERS.create(order),
            placement=PLACEMENTS.create(place),
            preemption=PREEMPTIONS.create(preemption) if preemption else None,
            name=f"{name}+{place}",
        )

    make.__doc__ = f"{order} order, {preemption or 'no'} preemption, consolidate placement by default"
    return make


for _name, (_order, _pre) in _DEFAULTS.items():
    SCHEDULERS[_name] = _factory(_name, _order, _pre)


def build_scheduler(policy: str, placement: str | None = None, **options: object) -> Scheduler:
    return SCHEDULERS.create(policy, placement=placement, **options)
