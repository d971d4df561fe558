"""The vision-transformer building blocks that model code imports from timm (`from timm.models.vision_transformer
import PatchEmbed, Attention, Mlp`), sized from their published layout in torch layers:

- `PatchEmbed(img_size=224, patch_size=16, in_chans=3, embed_dim=768, norm_layer=None, bias=True)`: one
  `Conv2d(in_chans, embed_dim, kernel=patch, stride=patch)`, then `norm_layer(embed_dim)` when one is given.
- `Attention(dim, num_heads=8, qkv_bias=False, qk_norm=False, norm_layer=LayerNorm)`: `Linear(dim, 3*dim)` with
  the qkv bias, `Linear(dim, dim)` with bias, and a norm over the head width for q and for k when `qk_norm`.
- `Mlp(in_features, hidden_features=in, out_features=in, act_layer=GELU, norm_layer=None, bias=True)`: two
  linears, `norm_layer(hidden)` between them when one is given, and the activation's own parameters if any.

Any argument that is not a known value (a norm layer the interpreter cannot build) gives up, as elsewhere.
"""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod, build_nn

Interp = Any
"""The interpreter (`interp.Interp`), not imported: calls.py imports this module."""

TIMM_BLOCKS = frozenset({"PatchEmbed", "Attention", "Mlp"})
_ARGS = {
    "PatchEmbed": (("img_size", 224), ("patch_size", 16), ("in_chans", 3), ("embed_dim", 768), ("norm_layer", None),
                   ("flatten", True), ("bias", True)),
    "Attention": (("dim", GiveUp), ("num_heads", 8), ("qkv_bias", False), ("qk_norm", False), ("attn_drop", 0.0),
                  ("proj_drop", 0.0), ("norm_layer", "LayerNorm")),
    "Mlp": (("in_features", GiveUp), ("hidden_features", None), ("out_features", None), ("act_layer", "GELU"),
            ("norm_layer", None), ("bias", True), ("drop", 0.0)),
}


def _bound(name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    spec = _ARGS[name]
    if len(args) > len(spec):
        raise GiveUp(f"timm {name} with more positional arguments than it takes")
    out = {}
    for i, (key, default) in enumerate(spec):
        value = args[i] if i < len(args) else kwargs.get(key, default)
        if value is GiveUp:
            raise GiveUp(f"timm {name} without {key}")
        out[key] = value
    return out


def _built(it: Interp, layer: Any, width: int, where: str) -> int:
    """Parameters of `layer(width)` (a norm layer class or partial), or of the named torch layer."""
    if layer is None:
        return 0
    got = build_nn(layer, [width], {}) if isinstance(layer, str) else it.call(layer, [width], {}, where)
    if not isinstance(got, Mod):
        raise GiveUp("a timm block's norm layer that is not a module")
    return got.total()


def _activation(it: Interp, layer: Any, where: str) -> int:
    if layer is None or isinstance(layer, str):
        return 0 if layer is None else build_nn(layer, [], {}).total()
    got = it.call(layer, [], {}, where)
    if not isinstance(got, Mod):
        raise GiveUp("a timm block's activation that is not a module")
    return got.total()


def _pos(it: Interp, v: Any, what: str) -> int:
    v = it.concrete(v)
    if isinstance(v, (list, tuple)) and len(set(v)) == 1:
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise GiveUp(f"timm block: {what} is not a known positive integer ({v!r})")
    return v


def _flag(it: Interp, v: Any, what: str) -> bool:
    v = it.concrete(v)
    if not isinstance(v, bool) and v not in (0, 1):
        raise GiveUp(f"timm block: {what} is not a known flag ({v!r})")
    return bool(v)


def timm_block(it: Interp, name: str, args: list[Any], kwargs: dict[str, Any], where: str) -> Mod:
    a = _bound(name, args, kwargs)
    if name == "PatchEmbed":
        p, cin, d = _pos(it, a["patch_size"], "patch_size"), _pos(it, a["in_chans"], "in_chans"), \
            _pos(it, a["embed_dim"], "embed_dim")
        own = cin * d * p * p + (d if _flag(it, a["bias"], "bias") else 0) + _built(it, a["norm_layer"], d, where)
        img = it.concrete(a["img_size"])
        hw = tuple(img) if isinstance(img, (list, tuple)) else (img, img)
        mod = Mod(name, own)
        if len(hw) == 2 and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in hw):
            grid = (hw[0] // p, hw[1] // p)  # what the constructor reads back (`self.patch_embed.num_patches`)
            mod.attrs.update(img_size=hw, patch_size=(p, p), grid_size=grid, num_patches=grid[0] * grid[1])
        return mod
    elif name == "Attention":
        d, h = _pos(it, a["dim"], "dim"), _pos(it, a["num_heads"], "num_heads")
        if d % h:
            raise GiveUp("timm Attention: dim not divisible by num_heads")
        own = d * 3 * d + (3 * d if _flag(it, a["qkv_bias"], "qkv_bias") else 0) + d * d + d
        if _flag(it, a["qk_norm"], "qk_norm"):
            own += 2 * _built(it, a["norm_layer"], d // h, where)
    else:
        cin = _pos(it, a["in_features"], "in_features")
        hid = _pos(it, a["hidden_features"], "hidden_features") if a["hidden_features"] is not None else cin
        out = _pos(it, a["out_features"], "out_features") if a["out_features"] is not None else cin
        bias = _flag(it, a["bias"], "bias")
        own = cin * hid + out * hid + ((hid + out) if bias else 0) + _built(it, a["norm_layer"], hid, where) \
            + _activation(it, a["act_layer"], where)
    return Mod(name, own)
