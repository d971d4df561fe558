"""A model config the job reads itself from a JSON file named on its command line.

    parser.add_argument("--config", default="configs/tiny.json")
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)          # {"model_layers": 24, "model_dim": 2048, "model_vocab_size": 50400, ...}
    train(config)

Trainers written for TPU pods and JAX meshes often keep a flat JSON of every setting and prefix the model's
knobs with `model_` (`model_layers`, `model_dim`, `model_heads`, `model_vocab_size`, `model_head_dim`). The
file the path resolves to (the flag's default or the command line) is read and its decoder-LM knobs counted
with the formula of knobs.py, the prefix read through. Only when exactly one such file is loaded and it
names a depth, a width and a vocabulary; anything else (an encoder-decoder, several files, a path that does
not resolve) leaves the size to the other readers.
"""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.static.modelsize.hf_config import (
    _local_config,
    params_from_config_json,
    put_single_count,
)

_PREFIX = "model_"
# bare nouns a prefix leaves behind, named as the knob tables spell them
_BARE = {"layers": "num_layers", "heads": "num_heads", "kv_heads": "num_kv_heads", "dim": "hidden_size",
         "vocab": "vocab_size", "ff_dim": "ffn_dim", "mlp_dim": "mlp_dim", "d_ff": "d_ff"}


def unprefixed_knobs(values: dict[str, Any]) -> dict[str, Any]:
    """The config with its `model_`-prefixed keys also under the knob tables' names (`model_layers` ->
    `num_layers`, `model_dim` -> `hidden_size`, `model_vocab_size` -> `vocab_size`); unprefixed keys win."""
    out = dict(values)
    for key, v in values.items():
        if not key.startswith(_PREFIX):
            continue
        leaf = key.removeprefix(_PREFIX)
        name = _BARE.get(leaf, leaf)
        out.setdefault(name, v)
    return out


def params_from_json_config(values: dict[str, Any]) -> tuple[int, list[str]] | None:
    """The count for one flat JSON of settings, its `model_` knobs read through; None when it does not
    describe one decoder or encoder stack."""
    got = params_from_config_json(unprefixed_knobs(values))
    if got is None:
        return None
    back = {(_BARE.get(k.removeprefix(_PREFIX), k.removeprefix(_PREFIX))): k for k in values if k.startswith(_PREFIX)}
    return got[0], [k if k in values else back.get(k, k) for k in got[1]]


def _loads_json(sp: Any, rel: str) -> bool:
    return any(r == rel and c["func"] in {"json.load", "json.loads"} for r, c in sp._find_calls("load", "loads"))


def _path_value(sp: Any, src: str) -> tuple[bool, Any, list[str]]:
    """The path an `open(...)` argument holds: what the resolver evaluates, else the option a parsed-arguments
    attribute names (`args.config`, `FLAGS.config`: the flag's command-line value or its default)."""
    got = sp._resolver.eval(src)
    if got[0] or not isinstance(src, str) or src.count(".") != 1:
        return got
    name = src.split(".", 1)[1]
    pv = sp.r.params.get(name)
    if pv is None or not isinstance(pv.value, str):
        return got
    return True, pv.value, list(pv.where)


def params_from_loaded_json(sp: Any) -> None:
    """Put the count of the one JSON config a file of the job opens by a resolvable path and parses with
    `json.load`, when its knobs give a depth, a width and a vocabulary."""
    found: dict[int, list[str]] = {}
    for rel, c in sp._find_calls("open"):
        if not c["args"] or not _loads_json(sp, rel):
            continue
        ok, v, ev = _path_value(sp, c["args"][0])
        if not ok or not isinstance(v, str) or not v.strip().endswith(".json"):
            continue
        got = _local_config(sp, rel, v.strip())
        if got is None:
            continue
        counted = params_from_json_config(got[1])
        if counted is not None:
            found.setdefault(counted[0], [f"{rel}:{c['line']}", *ev, got[0]])
    put_single_count(sp, found, "the JSON config the job loads, its model knobs counted with the transformer formula")


__all__ = ["params_from_json_config", "params_from_loaded_json", "unprefixed_knobs"]
