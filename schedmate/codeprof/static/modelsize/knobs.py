"""A model's size from its family's knobs, wherever the job states them: a config section, command-line flags,
or the keyword arguments of the call that builds the model.

    unet_from_knobs(values)  -> params | None   DDPM/ADM UNets: base channels, channel multipliers, residual
                                                 blocks per level, attention resolutions (image size, ADM flags)
    lm_from_knobs(values)    -> params | None   decoder LMs: layers, width, query/KV heads, head width, MLP
                                                 width, vocabulary, experts, in the vocabularies of HF configs
                                                 (`num_key_value_heads`), MaxText (`base_emb_dim`), Megatron, ...

`values` maps a knob's leaf name to its value (one config section, or the flags, or one call's arguments).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from schedmate.codeprof.static.modelsize.dit import DIT_KNOBS, builds_dit, dit_params
from schedmate.codeprof.static.modelsize.families import decoder_lm_params, unet_params, vit_params

_UNET_CH = ("ch", "nf", "model_channels", "num_channels", "base_channels", "unet_channels", "model_ch")
_UNET_MULT = ("ch_mult", "channel_mult", "channel_mults", "channel_multiplier", "dim_mults")
_UNET_BLOCKS = ("num_res_blocks", "num_resblocks", "n_res_blocks", "layers_per_block")
_UNET_ATTN = ("attn_resolutions", "attention_resolutions", "attn_res", "attention_resolution")
_RESOLUTION = ("image_size", "resolution", "img_size", "img_resolution", "input_size")
UNET_SIGNATURE = set(_UNET_MULT) | set(_UNET_BLOCKS)

# ADM's default channel multipliers by image size when `channel_mult` is left empty
_ADM_MULT = {512: (0.5, 1, 1, 2, 2, 4, 4), 256: (1, 1, 2, 2, 4, 4), 128: (1, 1, 2, 3, 4), 64: (1, 2, 3, 4),
             32: (1, 2, 2, 2)}


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int) and v > 0:
        return v
    if isinstance(v, float) and v.is_integer() and v > 0:
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"\d+", v.strip().replace("_", "")):
        return int(v.strip().replace("_", "")) or None
    return None


def _ints(v: Any) -> tuple[int, ...] | None:
    """(1, 2, 2, 2), [16], '32,16,8', '1,2,4' -> a tuple of positive ints."""
    if isinstance(v, str):
        parts = [p for p in re.split(r"[,\s()\[\]]+", v) if p]
        v = parts
    if isinstance(v, (list, tuple)) and v:
        out = [_int(x) for x in v]
        return tuple(out) if all(x is not None for x in out) else None  # type: ignore[misc]
    n = _int(v)
    return (n,) if n is not None else None


def _pick(values: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    for n in names:
        if n in values and values[n] is not None and values[n] != "":
            return n, values[n]
    return None


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in {"true", "1", "yes"}) or v == 1


def unet_from_knobs(values: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    """Parameters of a DDPM/ADM UNet, and the knob names used. Needs base channels and residual blocks per
    level; the multipliers come from the knobs or, for ADM's empty `channel_mult`, from the image size."""
    ch = _pick(values, _UNET_CH)
    blocks = _pick(values, _UNET_BLOCKS)
    if ch is None or blocks is None or _int(ch[1]) is None or _int(blocks[1]) is None:
        return None
    res = _pick(values, _RESOLUTION)
    resolution = _int(res[1]) if res else None
    mult_kv = _pick(values, _UNET_MULT)
    mult = _ints(mult_kv[1]) if mult_kv else None
    if mult is None:
        if mult_kv is None and "attention_resolutions" not in values:
            return None  # neither multipliers nor ADM's flags: not a UNet description
        if resolution not in _ADM_MULT or resolution == 512:
            return None
        mult = tuple(int(m) for m in _ADM_MULT[resolution])
    attn_kv = _pick(values, _UNET_ATTN)
    attn = _ints(attn_kv[1]) if attn_kv else ()
    if attn is None:
        attn = ()
    used = [ch[0], blocks[0], *(k for k in (mult_kv[0] if mult_kv else None, attn_kv[0] if attn_kv else None,
                                             res[0] if res else None) if k)]
    learn_sigma = _truthy(values.get("learn_sigma"))
    in_ch = _int(values.get("in_channels")) or 3
    out_ch = _int(values.get("out_channels")) or (2 * in_ch if learn_sigma else in_ch)
    classes = None
    if _truthy(values.get("class_cond")):
        classes = _int(values.get("num_classes")) or 1000
    n = unet_params(_int(ch[1]), mult, _int(blocks[1]), attn, resolution, in_ch=in_ch, out_ch=out_ch,  # type: ignore[arg-type]
                    scale_shift=_truthy(values.get("use_scale_shift_norm")),
                    updown=_truthy(values.get("resblock_updown")), num_classes=classes)
    return n, used


_LM = {
    "layers": ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "num_decoder_layers", "decoder_layers"),
    "hidden": ("hidden_size", "d_model", "n_embd", "emb_dim", "model_dim", "embed_dim", "dim"),
    "heads": ("num_attention_heads", "num_query_heads", "n_head", "n_heads", "num_heads"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_kv_heads", "num_query_groups", "multi_query_group_num"),
    "head_dim": ("head_dim", "kv_channels"),
    "ffn": ("intermediate_size", "ffn_hidden_size", "mlp_dim", "d_ff", "ffn_dim", "moe_intermediate_size"),
    "vocab": ("vocab_size", "padded_vocab_size", "n_vocab"),
    "experts": ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"),
}
_GATED_ACT = re.compile(r"silu|swiglu|swish|geglu|gelu_glu|glu", re.IGNORECASE)
_GATED_TYPE = re.compile(r"llama|mistral|mixtral|qwen|gemma|deepseek|yi|internlm|baichuan|olmo", re.IGNORECASE)


def lm_knobs(values: Mapping[str, Any]) -> dict[str, tuple[str, int]]:
    """The decoder-LM knobs present (a `base_` prefix, MaxText's, is read through)."""
    flat = {k.removeprefix("base_"): v for k, v in values.items()}
    out: dict[str, tuple[str, int]] = {}
    for knob, names in _LM.items():
        got = _pick(flat, names)
        if got is not None and (n := _int(got[1])) is not None:
            key = got[0] if got[0] in values else f"base_{got[0]}"
            out[knob] = (key, n)
    return out


def lm_from_knobs(values: Mapping[str, Any], family: str | None = None) -> tuple[int, list[str]] | None:
    """Parameters of a decoder LM from its knobs: layers, width and vocabulary at least."""
    k = lm_knobs(values)
    if not all(x in k for x in ("layers", "hidden", "vocab")):
        return None
    act = values.get("hidden_act") or values.get("activation") or values.get("mlp_activations")
    gated = bool(
        (isinstance(act, (list, tuple)) and len(act) >= 2)
        or (isinstance(act, str) and _GATED_ACT.search(act))
        or "rms_norm_eps" in values
        or _GATED_TYPE.search(str(values.get("model_type") or "")) or _GATED_TYPE.search(str(family or ""))
    )
    tie = values.get("tie_word_embeddings", values.get("logits_via_embedding"))
    tied = _truthy(tie) if tie is not None else not gated

    def g(name: str) -> int | None:
        return k[name][1] if name in k else None

    n = decoder_lm_params(g("layers"), g("hidden"), heads=g("heads"), ffn=g("ffn"), vocab=g("vocab"),  # type: ignore[arg-type]
                          kv_heads=g("kv_heads"), head_dim=g("head_dim"), experts=g("experts") or 1,
                          gated=gated, tied=tied)
    return n, [key for key, _ in k.values()]


_VIT_WIDTH = ("embed_dim", "hidden_size", "width", "dim")
_VIT_DEPTH = ("depth", "num_layers", "num_hidden_layers")


def vit_from_knobs(values: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    """A plain ViT from one section's patch size, width and depth (one int: a list of depths is a hierarchical
    model such as Swin, not this formula); MLP ratio, image size and classes when given."""
    patch, width, depth = _pick(values, ("patch_size",)), _pick(values, _VIT_WIDTH), _pick(values, _VIT_DEPTH)
    if patch is None or width is None or depth is None or {"learn_sigma", "class_dropout_prob"} & set(values):
        return None  # a diffusion transformer (DiT): adaptive-norm modulation adds half again
    p, w, d = _int(patch[1]), _int(width[1]), _int(depth[1])
    if p is None or w is None or d is None:
        return None
    ratio = values.get("mlp_ratio", 4.0)
    ratio = float(ratio) if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio > 0 else 4.0
    img = _pick(values, ("img_size", "image_size", "input_size"))
    sizes = _ints(img[1]) if img else None
    image = int((sizes[0] * sizes[-1]) ** 0.5) if sizes else 224
    classes = _int(values.get("num_classes"))
    n = vit_params(p, w, d, ratio, image=image, classes=classes if classes is not None else 1000)
    return n, [k for k in (patch[0], width[0], depth[0]) if k]


def dit_from_knobs(values: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    """A diffusion transformer (dit.py) from one section's patch size, width and depth; MLP ratio, classes and
    `learn_sigma` when given (the official default learns sigma)."""
    patch, width, depth = _pick(values, ("patch_size",)), _pick(values, _VIT_WIDTH), _pick(values, _VIT_DEPTH)
    p, w, d = (_int(x[1]) if x else None for x in (patch, width, depth))
    if p is None or w is None or d is None:
        return None
    ratio = values.get("mlp_ratio", 4.0)
    ratio = float(ratio) if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio > 0 else 4.0
    classes = _int(values.get("num_classes"))
    sigma = values.get("learn_sigma", True) is not False
    n = dit_params(p, w, d, ratio, classes=classes if classes is not None else 1000, learn_sigma=sigma)
    return n, [k for k in (patch[0], width[0], depth[0]) if k]  # type: ignore[index]


def section_values(items: list[tuple[str, Any]], signature: set[str],
                   accept: Callable[[str], bool] = lambda key: True) -> list[tuple[str, dict[str, Any]]]:
    """Sections of dotted (key, value) pairs that hold a signature knob: each as (section, {leaf: value}); the
    top level ('') collects the undotted keys (flags)."""
    sections: dict[str, dict[str, Any]] = {}
    for key, value in items:
        if not accept(key):
            continue
        sec, _, leaf = key.rpartition(".")
        sections.setdefault(sec, {})[leaf] = value
    return [(sec, vals) for sec, vals in sections.items() if signature & set(vals)]


__all__ = ["UNET_SIGNATURE", "lm_from_knobs", "lm_knobs", "section_values", "unet_from_knobs"]


def _put(sp: Any, n: int, where: list[str], note: str) -> None:
    sp.r.put("params", n, list(dict.fromkeys(where)), note=note)


def _unet_from_calls(sp: Any) -> tuple[int, list[str]] | None:
    """A UNet built by a call in the job's code with its knobs as keyword arguments
    (`unet.model(x, ch=128, ch_mult=(1, 2, 2, 2), num_res_blocks=2, attn_resolutions=(16,))`), or a defaults
    table of them (`dict(num_channels=128, ...)` turned into flags): a knob set in a config or on the command
    line beats the code's literal."""
    from schedmate.codeprof.params import CONFIG

    found: dict[int, list[str]] = {}
    for rel, c in sp.calls:
        kw = c.get("kwargs") or {}
        if not (UNET_SIGNATURE & set(kw)) or not (set(_UNET_CH) & set(kw)) or sp._active(c) is False:
            continue
        values: dict[str, Any] = {}
        where = [f"{rel}:{c['line']}"]
        for name, expr in kw.items():
            pv = sp.r.params.get(name)
            if pv is not None and pv.layer >= CONFIG:  # a defaults table the flags or a config override
                values[name] = pv.value
                where.extend(pv.where)
                continue
            ok, v, ev = sp._resolver.eval(expr)
            if ok:
                values[name] = v
                where.extend(ev)
        if not any(n in values for n in _RESOLUTION):
            for n in _RESOLUTION:
                pv = sp.r.params.get(n)
                if pv is not None and _int(pv.value):
                    values[n] = pv.value
                    where.extend(pv.where)
                    break
        got = unet_from_knobs(values)
        if got is not None:
            found.setdefault(got[0], where)
    if len(found) != 1:
        return None  # none, or differently sized UNets on different paths
    n, where = next(iter(found.items()))
    return n, where


def params_from_knobs(sp: Any, dims_read_elsewhere: bool) -> None:
    """The trained model's size from its family's knobs: a UNet's (config section, flags or the building
    call), else a decoder LM's when derive.py's width/depth formula cannot read them (knob names it does not
    know, grouped KV heads, experts). Not when the run names a published model (its own config then
    overrides these generic defaults)."""
    from schedmate.codeprof import known
    from schedmate.codeprof.params import CONFIG
    from schedmate.codeprof.static.names import MODEL_NAME

    P = sp.r.params
    items = [(k, pv.value) for k, pv in P.items()]
    where_of = {k: pv.where for k, pv in P.items()}

    def sec_where(sec: str, names: list[str]) -> list[str]:
        return [w for n in names for w in where_of.get(f"{sec}.{n}" if sec else n, [])]

    unets = {}
    for sec, vals in section_values(items, UNET_SIGNATURE):
        if sec and not any(n in vals for n in _RESOLUTION):
            res = next((pv for n in _RESOLUTION if (pv := P.get(n)) is not None and _int(pv.value)), None)
            if res is not None:
                vals = {**vals, res.key.rsplit(".", 1)[-1]: res.value}
        got = unet_from_knobs(vals)
        if got is not None:
            unets.setdefault(got[0], sec_where(sec, got[1]) or [P.get(got[1][0]).where[0]])
    if len(unets) == 1:
        n, where = next(iter(unets.items()))
        _put(sp, n, where, "UNet from its knobs (channels, multipliers, residual blocks, attention)")
        return
    if not unets and (got := _unet_from_calls(sp)) is not None:
        _put(sp, got[0], got[1], "UNet from the knobs of the call that builds it")
        return
    for k in MODEL_NAME:
        pv = P.get(k)
        if pv is not None and isinstance(pv.value, str) and known.lookup_model(pv.value):
            return
    vits = {}
    dit = builds_dit(sp.calls, sp._active)  # the job builds a `DiT(...)`: its knobs are a diffusion transformer's
    for sec, vals in section_values(items, {"patch_size"}):
        layers = [P.get(f"{sec}.{k}" if sec else k) for k in vals]
        if not any(pv is not None and pv.layer >= CONFIG for pv in layers):
            continue  # code defaults alone describe a model the run may not build
        is_dit = dit or bool(DIT_KNOBS & set(vals))
        if (got := dit_from_knobs(vals) if is_dit else vit_from_knobs(vals)) is not None:
            vits[sec] = (*got, "DiT" if is_dit else "ViT")
    if len(vits) == 1:
        sec, (n, used, kind) = next(iter(vits.items()))
        _put(sp, n, sec_where(sec, used), f"{kind} from its knobs (patch, width, depth)")
        return
    lm_items = [(k, v) for k, v in items if P.get(k) is not None and P.get(k).layer >= CONFIG]  # type: ignore[union-attr]
    for sec, vals in section_values(lm_items, {"vocab_size", "padded_vocab_size", "n_vocab"}):
        knobs = lm_knobs(vals)
        refined = ("kv_heads" in knobs and "heads" in knobs and knobs["kv_heads"][1] < knobs["heads"][1]) \
            or knobs.get("experts", ("", 1))[1] > 1
        if dims_read_elsewhere and not refined:
            continue
        got = lm_from_knobs(vals, known.family_of(str(vals.get("model_type") or "")))
        if got is not None:
            _put(sp, got[0], sec_where(sec, got[1]), "decoder LM from its knobs (layers, width, heads, MLP, "
                                                     "vocabulary, experts)")
            return
