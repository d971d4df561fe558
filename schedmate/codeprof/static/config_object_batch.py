"""A batch size handed to a config object's constructor in the entry script: `DQNConfig(batch_size=32, ...)`.

Libraries keep their settings in config classes whose base declares a shared default (`batch_size: int = 256` on
a base dataclass) that each algorithm's class and each call may replace. The entry script's keyword is what the
run uses, so it beats any code default the analyzer read from the library (a dataclass field, a class attribute);
it does not beat the command line or a config file. Only batch keywords are taken: the other settings of such
calls (learning rates, scalers) are no field, and run lengths go through the fit calls."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.params import CODE_DEFAULT, CONFIG

_CONFIG_CLASS = re.compile(r"(?:Config|Cfg|Args|Arguments|Params|HParams|Hparams)$")
_HANDLED = {"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig"}  # read by the HF reading
_BATCH = re.compile(r"^(?:train_|training_)?batch_size$")


def read_config_object_batches(sp: Any) -> None:
    """Set each batch keyword of an active config-object call in the entry script over a code default."""
    r = sp.r
    P = r.params
    found: dict[str, set[Any]] = {}
    where: dict[str, list[str]] = {}
    for rel, c in sp.calls:
        tail = c["func"].rsplit(".", 1)[-1]
        if rel != r.entry or not _CONFIG_CLASS.search(tail) or tail in _HANDLED or sp._active(c) is False:
            continue
        for k, src in c["kwargs"].items():
            if not _BATCH.match(k):
                continue
            ok, v, ev = sp._resolver.eval(src)
            if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                found.setdefault(k, set()).add(v)
                where[k] = [f"{rel}:{c['line']}", *ev]
    for k, vals in found.items():
        cur = P.get(k)
        if len(vals) == 1 and (cur is None or cur.layer <= CODE_DEFAULT):  # two calls disagreeing: left as read
            P.set(k, next(iter(vals)), where[k], CONFIG)
