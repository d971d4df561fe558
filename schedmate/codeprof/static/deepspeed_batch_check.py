"""DeepSpeed's batch identity: train_batch_size = micro batch x gradient accumulation x data-parallel size.

The engine refuses a config where the three disagree, and fills the missing one from the other two. So when the
global batch comes from the DeepSpeed config and the micro batch the analyzer read elsewhere (an argparse
`--batch_size` the script never hands to the engine) cannot satisfy the identity (it times the accumulation does
not divide the global batch, or with the GPU count known the product differs), that micro batch is not the
engine's: it is dropped, and left null when the GPU count needed to derive it is open."""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.facts import Fact


def _int(facts: dict[str, Fact], name: str) -> int | None:
    f = facts.get(name)
    v: Any = f.value if f is not None else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def check_deepspeed_batch(facts: dict[str, Fact]) -> list[str]:
    fw = facts.get("framework")
    gb = facts.get("global_batch_size")
    if fw is None or fw.value != "deepspeed" or gb is None or gb.source == "derived" \
            or not any(w.split(":")[0].endswith(".json") for w in gb.evidence):
        return []
    g, m = _int(facts, "global_batch_size"), _int(facts, "micro_batch_size")
    a, n = _int(facts, "grad_accum_steps") or 1, _int(facts, "num_gpus")
    if g is None or m is None or facts["micro_batch_size"].source == "derived":
        return []
    model = (_int(facts, "parallelism.tensor") or 1) * (_int(facts, "parallelism.pipeline") or 1)
    dp = n // model if n is not None and n % model == 0 else None
    fits = g % (m * a) == 0 if dp is None else g == m * a * dp
    if fits:
        return []
    del facts["micro_batch_size"]
    return [f"micro_batch_size: {m} dropped: with accumulation {a}" + (f" over {dp} data-parallel ranks" if dp else "")
            + f" it does not give the DeepSpeed config's train_batch_size {g}; the engine's micro batch is "
            "train_batch_size / (accumulation x GPUs)"]
