"""TensorFlow-style hyperparameter strings on the command line: `--hparams="batch_size=16,num_layers=4"`.

`tf.contrib.training.HParams.parse` (and the scripts and libraries that kept its convention: tensor2tensor,
Magenta, the Tacotron ports, `--hparams_overrides`, `--hparams_set` companions) reads one option holding
comma-separated `name=value` pairs and overrides the defaults the job's `HParams(...)` declared. Each pair is
then a command-line value of that name. A value may be a bracketed list (`layers=[512,512]`), whose commas do
not split pairs.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.params import COMMAND_LINE
from schedmate.codeprof.static.names import parse_scalar

# the option that carries the string: `hparams`, `hparams_overrides`, `hparam_str`, `model_hparams` ...
_OPTION = re.compile(r"^(\w+_)?hparams?(_overrides?|_str(ing)?)?$", re.IGNORECASE)
_PAIR = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*(\[[^\]]*\]|[^,\[\]]*)\s*(?:,|$)")


def split_pairs(text: str) -> list[tuple[str, str]] | None:
    """`a=1,b=[2,3],c=x` -> [(a, 1), (b, [2,3]), (c, x)]; None when the text is not wholly such pairs."""
    text = text.strip().strip("'\"")
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _PAIR.match(text, pos)
        if m is None or m.end() == pos:
            return None
        out.append((m.group(1), m.group(2).strip()))
        pos = m.end()
    return out or None


def _value(raw: str) -> Any:
    if raw.startswith("[") and raw.endswith("]"):
        return [parse_scalar(x.strip()) for x in raw[1:-1].split(",") if x.strip()]
    return parse_scalar(raw)


def apply_hparams_strings(params: Any) -> list[str]:
    """Each `name=value` of a command-line hparams string becomes a command-line value of `name`.
    Returns the names set."""
    done: list[str] = []
    for pv in list(params._full.values()):
        if pv.layer < COMMAND_LINE or not isinstance(pv.value, str) or not _OPTION.match(pv.key.rsplit(".", 1)[-1]):
            continue
        pairs = split_pairs(pv.value)
        for name, raw in pairs or []:
            params.set(name, _value(raw), list(pv.where), COMMAND_LINE)
            done.append(name)
    return done
