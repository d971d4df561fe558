"""Settings the job draws at random: `epoch = random.choice([100, 150, 200]); config.num_epochs = epoch`.

A hyper-parameter search script overwrites the parsed option with a random draw before training, so the option's
value (its default or the command line's) is not what the run uses, and no static reading can tell which draw it
gets. A field read from such an option is left null, with the reason."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.static.length_help import option_at
from schedmate.codeprof.static.result import StaticResult

_RANDOM = re.compile(r"\b(?:random|np\.random|numpy\.random|rng|torch\.randint)\.?\w*\s*\(|\brandom\.\w+\(")
_FIELDS = ("global_batch_size", "micro_batch_size", "num_gpus", "train_steps", "epochs")


def _random_targets(summary: dict[str, Any]) -> dict[str, int]:
    """Setting name -> line, for names bound to a random draw, directly or through one local name."""
    drawn: dict[str, int] = {}
    for a in summary.get("assigns", []):
        expr, target = a.get("expr") or "", a.get("target") or ""
        if _RANDOM.search(expr) or (expr.strip() in drawn and "." in target):
            drawn[target] = a["line"]
    return {t.rsplit(".", 1)[-1].lower(): line for t, line in drawn.items() if "." in t}


def drop_random_settings(facts: dict[str, Fact], res: StaticResult) -> list[str]:
    """Drop (in place) each field read from an option the entry script overwrites with a random draw."""
    out: list[str] = []
    summary = res.py.get(res.entry or "")
    if not summary:
        return out
    drawn = _random_targets(summary)
    if not drawn:
        return out
    for name in _FIELDS:
        fact = facts.get(name)
        if fact is None or fact.value is None:
            continue
        for w in fact.evidence:
            opt = option_at(res, w)
            dest = str(opt.get("dest") or "").lower() if opt else ""
            if dest and dest in drawn:
                out.append(f"{name}: {fact.value} dropped: {res.entry}:{drawn[dest]} overwrites --{dest} with a "
                           "random draw before training; the value the run uses is open")
                del facts[name]
                break
    return out
