"""A model built from a transformers-style `config.json` that ships with the job.

    config = AutoConfig.from_pretrained("./configs/small")      # a directory holding config.json
    model = AutoModelForCausalLM.from_config(config)

    LlamaConfig.from_json_file("model_config.json")

The file's depth, width, heads, MLP width, vocabulary, key/value heads and experts are counted with the decoder
formula of families.py (knobs.py reads the key names), so a LLaMA-2-7B-shaped file gives 6.74B whatever the
directory is called. A flat config of one decoder or encoder stack is read that way; a BART-style
encoder-decoder (`encoder_layers`, `decoder_layers`, `d_model`, `encoder_ffn_dim`, `decoder_ffn_dim`) is counted
layer by layer (self-attention and MLP per encoder layer, self- and cross-attention and MLP per decoder layer,
one shared token embedding); other encoder-decoders (`is_encoder_decoder` alone) and composite configs
(`text_config`, `vision_config`) are not read.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from schedmate.codeprof.static.modelsize.knobs import lm_from_knobs

_COMPOSITE = ("text_config", "vision_config", "llm_config", "encoder", "decoder", "audio_config")


_ENC_DEC = ("encoder_layers", "decoder_layers", "d_model", "encoder_ffn_dim", "decoder_ffn_dim")


def _whole(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def encoder_decoder_params(values: dict[str, Any]) -> tuple[int, list[str]] | None:
    """A BART-style encoder-decoder from its per-stack depths and MLP widths; the token table is counted once
    (`vocab_size`, or the encoder's `encoder_vocab_size` when the sides are named apart)."""
    dims = [_whole(values.get(k)) for k in _ENC_DEC]
    vocab_key = next((k for k in ("vocab_size", "encoder_vocab_size") if _whole(values.get(k))), None)
    if any(x is None for x in dims) or vocab_key is None:
        return None
    enc_l, dec_l, d, enc_f, dec_f = dims  # type: ignore[misc]
    attn = 4 * d * d + 4 * d  # type: ignore[operator]
    enc = enc_l * (attn + 2 * d * enc_f + enc_f + d + 4 * d)  # type: ignore[operator]
    dec = dec_l * (2 * attn + 2 * d * dec_f + dec_f + d + 6 * d)  # type: ignore[operator]
    n = enc + dec + values[vocab_key] * d  # type: ignore[operator]
    return n, [*_ENC_DEC, vocab_key]


def params_from_config_json(values: dict[str, Any]) -> tuple[int, list[str]] | None:
    """The count for one parsed config.json, or None when it is neither a flat single-stack config nor a
    BART-style encoder-decoder."""
    if any(k in values for k in _COMPOSITE):
        return None
    if all(k in values for k in _ENC_DEC):
        return encoder_decoder_params(values)
    if values.get("is_encoder_decoder"):
        return None
    from schedmate.codeprof import known

    return lm_from_knobs(values, known.family_of(str(values.get("model_type") or "")))


def _local_config(sp: Any, rel: str, value: str) -> tuple[str, dict[str, Any]] | None:
    """(workdir path, parsed JSON) of the config a local path names: a `.json` file, or a directory with a
    config.json, looked up from the job's root and from the calling script's directory."""
    for base in ("", posixpath.dirname(rel)):
        p = sp.wd.rel(value, base)
        if p is None:
            continue
        cand = p if p.endswith(".json") else posixpath.join(p, "config.json")
        text = sp.wd.read_text(cand) if sp.wd.exists(cand) else None
        if text:
            try:
                got = json.loads(text)
            except ValueError:
                return None
            return (cand, got) if isinstance(got, dict) else None
    return None


def _builds_its_model(sp: Any, config_func: str) -> bool:
    """The job builds the model class the config class is named for (`FooBartConfig.from_pretrained(...)` then
    `FooBart(config)`): that config describes the whole model, not one part of a composite."""
    cls = config_func.rsplit(".", 1)[0].rsplit(".", 1)[-1]  # `pkg.FooConfig.from_pretrained` -> FooConfig
    stem = cls.removesuffix("Config")
    return bool(stem) and stem != cls and bool(sp._find_calls(stem))


def params_from_local_hf_config(sp: Any) -> None:
    """Put the count of the local config.json that a `from_pretrained` / `from_json_file` call on the run's
    path loads, when exactly one such file is loaded: a config object only when the job builds a model with
    `from_config` (else it may configure one part of the job's own composite model), a checkpoint directory
    only when the entry script loads it."""
    found: dict[int, list[str]] = {}
    builds_from_config = bool(sp._find_calls("from_config"))
    for rel, c in sp._find_calls("from_pretrained", "from_json_file"):
        if not c["args"] or "oken" in c["func"] or "rocessor" in c["func"]:
            continue
        if "Config" in c["func"] and not builds_from_config and not _builds_its_model(sp, c["func"]):
            continue  # a config handed to the job's own model class may be one part of it (a text encoder)
        if "Config" not in c["func"] and rel != sp.r.entry:
            continue  # a library module of the job loading a local checkpoint loads a component
        ok, v, ev = sp._resolver.eval(c["args"][0])
        if not ok or not isinstance(v, str) or not v.strip():
            continue
        got = _local_config(sp, rel, v.strip())
        if got is None:
            continue
        counted = params_from_config_json(got[1])
        if counted is not None:
            found.setdefault(counted[0], [f"{rel}:{c['line']}", *ev, got[0]])
    put_single_count(sp, found, "the job's own config.json counted with the transformer formula")


def put_single_count(sp: Any, found: dict[int, list[str]], note: str) -> None:
    """Put the parameter count when the configs found agree on one (evidence per count, first seen first)."""
    if len(found) == 1:
        n, where = next(iter(found.items()))
        sp.r.put("params", n, list(dict.fromkeys(where)), note=note)


__all__ = ["params_from_config_json", "params_from_local_hf_config"]
