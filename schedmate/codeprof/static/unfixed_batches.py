"""Batches that hold no fixed number of samples, by the job's own setting.

* `dynamic_batching: true` / `use_dynamic_bsz: true` (verl and its derivatives): the update micro-batches are
  packed to a token budget, so the samples per GPU per pass vary; the global batch (samples per update) stands.
* `batch_size_type: frame` (or `token`): the batch size counts audio frames or tokens, not samples, so neither
  the per-GPU nor the global batch is a sample count.
* A global batch that was only derived from the per-GPU batch (micro x accumulation x data-parallel size) goes
  with it under dynamic batching: it is then no more fixed than the batch it was computed from. A global batch
  the job states itself (verl's mini-batch) stands.
Each such batch field is left null with the reason."""

from __future__ import annotations

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.static.result import StaticResult

_DYNAMIC = ("dynamic_batching", "use_dynamic_bsz", "use_dynamic_batch_size", "dynamic_bsz")
_UNIT_KEYS = ("batch_size_type", "batch_type", "batch_unit")
_NOT_SAMPLES = {"frame", "frames", "token", "tokens"}


def _truthy(v: object) -> bool:
    return v is True or str(v).strip().lower() in {"true", "1", "yes"}


def unfixed_batches(facts: dict[str, Fact], res: StaticResult) -> list[str]:
    """Drop (in place) the batch fields the job's settings say hold no fixed sample count."""
    out: list[str] = []

    def drop(name: str, why: str) -> None:
        f = facts.get(name)
        if f is None or f.value is None:
            return
        out.append(f"{name}: {f.value} dropped: {why}")
        # a null fact, not a missing one: derivation must not fill it again from the other batch fields
        facts[name] = Fact(value=None, source="static", evidence=[], note=why)

    for key in _UNIT_KEYS:
        pv = res.params.get(key)
        if pv is not None and str(pv.value).strip().lower() in _NOT_SAMPLES:
            why = f"{key} {pv.value} ({pv.where[0]}): the batch counts {pv.value}s, not samples"
            drop("micro_batch_size", why)
            drop("global_batch_size", why)
            return out
    for key in _DYNAMIC:
        pv = res.params.get(key)
        if pv is not None and _truthy(pv.value):
            why = f"{key} ({pv.where[0]}) packs the micro-batches to a token budget; the samples per pass vary"
            drop("micro_batch_size", why)
            g = facts.get("global_batch_size")
            if g is not None and g.source == "derived":
                drop("global_batch_size", f"derived from the per-GPU batch, which {why}")
            break
    return out
