"""Named schedulers: a queue order, a default placement and preemption, composed.

`--policy NAME` picks one; `--placement NAME` overrides its placement. Every scheduler takes the
same arguments, so any order composes with any placement (including `delay`).
"""

from __future__ import annotations

from collections.abc import Callable

from schedmate.policies import delay as _delay  # registers fifo-nb, delay, network
from schedmate.policies.base import ORDERS, PLACEMENTS, PREEMPTIONS, Scheduler
from schedmate.registry import Registry

SCHEDULERS: Registry[Scheduler] = Registry("scheduling policy")

_DEFAULTS: dict[str, tuple[str, str | None]] = {
    # name: (order, preemption)
    "fifo": ("fifo", None),
    "sjf": ("sjf", None),
    "srtf": ("srtf", "priority"),
    "qssf": ("qssf", None),
    "tiresias": ("tiresias", "priority"),
    "fifo-nb": ("fifo-nb", None),
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


def _delay_factory(tuned: bool) -> Callable[..., Scheduler]:
    def make(
        placement: str | None = None,
        order: str = "fifo-nb",
        config: _delay.DelayConfig | None = None,
        preemption: _delay.NetworkPreemptionConfig | None | bool = True,
        migration: _delay.NetworkMigrationConfig | None | bool = True,
        tuner: object | None = None,
        **_: object,
    ) -> Scheduler:
        """Delay scheduling (see `schedmate.policies.delay`): non-blocking FIFO by default, `network`
        preemption and migration (pass preemption=False / migration=False to turn them off), fixed
        timers or the auto-tuner."""
        pre_cfg = _delay.NetworkPreemptionConfig() if preemption is True else (preemption or None)
        mig_cfg = _delay.NetworkMigrationConfig() if migration is True else (migration or None)
        q, place, pre, mig = _delay.delay_parts(_delay.DelaySetup(
            config=config or _delay.DelayConfig(), preemption=pre_cfg, migration=mig_cfg, order=order))
        name = "delay-tuned" if tuned else "delay"
        placement_obj = place if placement in (None, "delay") else PLACEMENTS.create(placement)
        sched = Scheduler(order=q, placement=placement_obj, preemption=pre, migration=mig, name=f"{name}+{order}")
        if tuned:
            from schedmate.policies.tuner import DelayTuner, TunerConfig

            cfg = tuner if isinstance(tuner, TunerConfig) else TunerConfig()
            hook = DelayTuner(place.timers, cfg, guard=place.guard)
            sched.tick_s = cfg.period_s
            sched.on_tick = hook
        return sched

    return make


SCHEDULERS["delay"] = _delay_factory(False)
SCHEDULERS["delay-tuned"] = _delay_factory(True)


def policy_options(policy: str, pairs: list[str]) -> dict[str, object]:
    """`KEY=VALUE` strings -> keyword arguments for `build_scheduler(policy, ...)`.

    The delay schedulers take every `DelayConfig` field (e.g. `node_factor=4`, `age_cap_s=604800`,
    `load_aware=false`, `guard=age`), `preemption` / `migration` (true|false), the fields of their
    configs as `preemption.FIELD` / `migration.FIELD` (e.g. `preemption.guard_victims=0`,
    `migration.gain_factor=4`) and `order` (a queue order's name); `delay-tuned` also the fields of the
    tuner's config as `tuner.FIELD` (e.g. `tuner.objective=0.5*avg_jct+0.5*p99_jct`,
    `tuner.event_budget=none`); the other schedulers take none. Raises ValueError naming the keys
    that are allowed."""
    if not pairs:
        return {}
    if policy not in ("delay", "delay-tuned"):
        raise ValueError(f"policy {policy!r} takes no options (only delay and delay-tuned do)")
    from schedmate.policies.tuner.config import TunerConfig

    sections: dict[str, type] = {"": _delay.DelayConfig, "preemption.": _delay.NetworkPreemptionConfig,
                                 "migration.": _delay.NetworkMigrationConfig}
    if policy == "delay-tuned":
        sections["tuner."] = TunerConfig
    values: dict[str, dict[str, object]] = {prefix: {} for prefix in sections}
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            raise ValueError(f"option {pair!r}: expected KEY=VALUE")
        if key in ("preemption", "migration"):
            out[key] = _parse_bool(key, raw)
            continue
        if key == "order":
            if raw not in ORDERS:
                raise ValueError(f"option order={raw!r}: expected one of {', '.join(sorted(ORDERS))}")
            out[key] = raw
            continue
        prefix = next((p for p in sections if p and key.startswith(p)), "")
        field = _config_fields(sections[prefix]).get(key.removeprefix(prefix))
        if field is None:
            allowed = sorted(["preemption", "migration", "order",
                              *[p + f for p, cls in sections.items() for f in _config_fields(cls)]])
            raise ValueError(f"unknown option {key!r} for {policy}: expected one of {', '.join(allowed)}")
        kind = str(field.type)
        try:
            if kind.startswith("tuple"):
                raise ValueError("a tuple cannot be given on the command line")
            if "None" in kind and raw.lower() == "none":
                value: object = None
            elif kind.startswith("bool"):
                value = _parse_bool(key, raw)
            elif kind.startswith("int"):
                value = int(raw)
            elif kind.startswith("str"):
                value = raw
            else:
                value = float(raw)
        except ValueError as e:
            raise ValueError(f"option {pair!r}: {e}") from None
        values[prefix][field.name] = value
    if values[""]:
        out["config"] = _delay.DelayConfig(**values[""])  # type: ignore[arg-type]
    for prefix, name in (("preemption.", "preemption"), ("migration.", "migration")):
        if values[prefix]:
            if out.get(name) is False:
                raise ValueError(f"options {prefix}*: {name} is turned off by {name}=false")
            out[name] = sections[prefix](**values[prefix])
    if values.get("tuner."):
        out["tuner"] = TunerConfig(**values["tuner."])  # type: ignore[arg-type]
    return out


def _config_fields(cls: type) -> dict[str, object]:
    import dataclasses

    return {f.name: f for f in dataclasses.fields(cls) if f.init}


def _parse_bool(key: str, raw: str) -> bool:
    low = raw.lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"{key}={raw!r}: expected true or false")
