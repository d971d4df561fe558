"""The trained model's size from an architecture or a size named in a setting, when nothing counted it.

Run after derivation, only when `params` is still null (an interpreter's count, a config's dims or a model
name the static pass chose always win). Four readers, each giving (name, parameters, evidence):

* **depth settings**: a `<family>_size` / `<family>_depth` / `<family>_layers` key (`resnet_size: 50`,
  `--resnet_depth=101`, `densenet_depth`) -> `resnet50`; wide ResNets by name or by depth and widening factor
  (`WRN-28-2`, `wrn_28_10`, `arch: wideresnet` + `depth: 28` + `widen_factor: 2`) -> the WRN formula;
* **model settings**: the value of a model key (`model`, `model_name`, `model_factory`, `model_type`, `arch`,
  `architecture`, `variant`, `net`, a model section's `_target_`) the table knows or that states its size
  (`llama2_1B`, `stable_diffusion_2`);
* **checkpoint directories held in a variable**: `--model_config_path=$LARGE_DIR/xlnet_config.json`,
  `--bert_config_file=$BERT_BASE_DIR/bert_config.json`: the size word in the variable's name and the family in
  the variable's or the file's name -> `xlnet-large`, `bert-base`;
* **size directories and gin files**: a path whose components name a family and then a size
  (`gs://t5-data/pretrained_models/small/operative_config.gin`, `checkpoints/bert/large/`), and T5's gin
  names (`t5.1.1.base.gin`, `t5.1.0.small.gin`).

A setting of an auxiliary model (teacher, reference, reward, evaluation, tokenizer, VAE, text encoder) never
names the trained one, and a depth key inside a larger network (a backbone under a detector's heads, an FPN)
is a part. When the readers find names whose sizes differ by more than `AGREE`, the field stays null: two
competing names are no evidence of either.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.params import ParamSpace

AGREE = 1.2
"""names whose published sizes are within this factor of each other name the same model"""

_AUX = re.compile(r"teacher|(^|[._])ref(erence)?([._]|$)|reward|judge|critic|(^|[._])eval|tokeni[sz]er|spiece|vocab|"
                  r"vae|text_encoder|clip|discriminator|(^|[._])(val|test|valid)([._]|$)", re.IGNORECASE)
# a key of a larger network whose trunk a depth key describes: the depth names a part, not the model
_PART = re.compile(r"backbone|fpn|rpn|roi|anchor|neck|decode_head|mask_head|bbox_head|aspp|proposal", re.IGNORECASE)
_DEPTH_KEY = re.compile(r"^(resnet|resnext|densenet|vgg)_?(size|depth|layers|num_layers)$")
_MODEL_KEYS = {"model", "model_name", "model_factory", "model_type", "model_arch", "model_size", "model_variant",
               "arch", "architecture", "variant", "net", "network", "net_type"}
_SIZE_WORDS = ("xxlarge", "xlarge", "large", "base", "medium", "small", "tiny", "xxl", "xl")
_FAMILY_PREFIX = re.compile(r"^(mt5|byt5|t5|xlnet|spanbert|roberta|albert|electra|deberta|bert|gpt2)(?=$|[-_.])")
_T5_GIN = re.compile(r"^(mt5|t5)\.1\.([01])\.(small|base|large|xl|xxl|3b|11b)$")
_WRN_NAME = re.compile(r"^(?:wrn|wide[_-]?resnet)[_-]?(\d{2})[_-](\d{1,2})$")
_WRN_ARCH = re.compile(r"^(wrn|wide[_-]?resnet|wideresnet)$")
_WRN_DEPTHS = {10, 16, 22, 28, 34, 40}


def wrn_params(depth: int, widen: int, classes: int = 10) -> float | None:
    """Parameters of the CIFAR wide ResNet WRN-`depth`-`widen` (Zagoruyko & Komodakis 2016: pre-activation
    basic blocks, (depth - 4) / 6 per group, widths 16k, 32k, 64k, BN everywhere, a 1x1 shortcut where the width
    changes): WRN-28-2 1.47M, WRN-28-10 36.5M as the paper's Table 1 and the FixMatch/UDA papers publish."""
    if depth not in _WRN_DEPTHS or not 1 <= widen <= 20:
        return None
    n = (depth - 4) // 6
    total = 3 * 16 * 9  # the stem convolution
    cin = 16
    for width in (16 * widen, 32 * widen, 64 * widen):
        for b in range(n):
            i = cin if b == 0 else width
            total += 2 * i + 9 * i * width + 2 * width + 9 * width * width + (i * width if i != width else 0)
        cin = width
    return float(total + 2 * cin + cin * classes + classes)


def _norm(value: str) -> str:
    return known.normalise_name(value.strip())


def _hit(value: str) -> tuple[str, float] | None:
    """A name the table knows (also with `_` for `-`: `stable_diffusion_2`) or that states its size beside a
    family keyword (`llama2_1B`); a bare size or an unknown word is no name."""
    n = _norm(value)
    if not re.fullmatch(r"[a-z][\w.+/-]*", n):
        return None
    for cand in dict.fromkeys((n, n.replace("_", "-"))):
        hit = known.lookup_model(cand)
        if hit is not None and hit[1] and (hit[0] != cand or known.family_keyword(cand)):
            return hit[0], hit[2]
    wrn = _WRN_NAME.match(n)
    if wrn and (p := wrn_params(int(wrn.group(1)), int(wrn.group(2)))) is not None:
        return f"wrn-{wrn.group(1)}-{wrn.group(2)}", p
    return None


def _from_depth_keys(P: ParamSpace) -> list[tuple[str, float, list[str]]]:
    out: list[tuple[str, float, list[str]]] = []
    items = P.items()
    if any(_PART.search(k) for k, _ in items):
        return out
    for key, pv in items:
        leaf = key.rsplit(".", 1)[-1]
        m = _DEPTH_KEY.match(leaf)
        if m and isinstance(pv.value, int) and not isinstance(pv.value, bool) and not _AUX.search(key):
            hit = known.lookup_model(f"{m.group(1)}{pv.value}")
            if hit is not None:
                out.append((hit[0], hit[2], list(pv.where)))
    # a wide ResNet chosen by name and shaped by depth and widening factor
    arch = next((pv for k, pv in items if k.rsplit(".", 1)[-1] in _MODEL_KEYS and isinstance(pv.value, str)
                 and _WRN_ARCH.match(pv.value.strip().lower())), None)
    depth = P.get("depth", "model_depth", "wrn_depth")
    widen = P.get("widen_factor", "wide_factor", "widen", "model_width", "width_factor")
    if arch is not None and depth is not None and widen is not None \
            and all(isinstance(v.value, int) and not isinstance(v.value, bool) for v in (depth, widen)):
        p = wrn_params(depth.value, widen.value)
        if p is not None:
            out.append((f"wrn-{depth.value}-{widen.value}", p, [*arch.where, *depth.where, *widen.where]))
    return out


def _from_model_keys(P: ParamSpace) -> list[tuple[str, float, list[str]]]:
    out: list[tuple[str, float, list[str]]] = []
    for key, pv in P.items():
        parts = key.split(".")
        leaf, owner = parts[-1], parts[-2] if len(parts) > 1 else ""
        if not isinstance(pv.value, str) or _AUX.search(key) or _PART.search(key):
            continue
        value = pv.value
        if leaf in {"_target_", "_component_", "class_path"} and owner in {"model", "net", "network"}:
            value = value.rsplit(".", 1)[-1]
        elif leaf not in _MODEL_KEYS:
            continue
        if (hit := _hit(value)) is not None:
            out.append((hit[0], hit[1], list(pv.where)))
    return out


def _from_variable_dirs(P: ParamSpace) -> list[tuple[str, float, list[str]]]:
    """`$LARGE_DIR/xlnet_config.json`: the unknown variable's name holds the size word."""
    out: list[tuple[str, float, list[str]]] = []
    for key, pv in P.items():
        if not isinstance(pv.value, str) or "\x00" not in pv.value or _AUX.search(key):
            continue
        m = re.match(r"^\x00([A-Za-z_]\w*)\x00/(.+)$", pv.value.strip())
        if m is None:
            continue
        var, rest = m.group(1).lower(), m.group(2).lower()
        tokens = var.split("_")
        size = next((t for t in tokens if t in _SIZE_WORDS), None)
        fam = next((f.group(1) for t in [*tokens, PurePosixPath(rest).name] if (f := _FAMILY_PREFIX.match(t))), None)
        if size is not None and fam is not None and (hit := known.lookup_model(f"{fam}-{size}")) is not None:
            out.append((hit[0], hit[2], list(pv.where)))
    return out


def _t5_gin(stem: str) -> str | None:
    m = _T5_GIN.match(stem)
    if m is None:
        return None
    fam, minor, size = m.groups()
    if minor == "1":
        return f"t5-v1_1-{size}" if fam == "t5" else f"mt5-{size}"
    return f"{fam}-{ {'xl': '3b', 'xxl': '11b'}.get(size, size)}"


def _from_paths(values: list[tuple[str, list[str]]]) -> list[tuple[str, float, list[str]]]:
    """A family component followed by a size component (`t5-data/pretrained_models/small/...`), or a T5 gin."""
    out: list[tuple[str, float, list[str]]] = []
    for value, where in values:
        parts = [p for p in re.split(r"[/\\]", value.strip().lower()) if p and "\x00" not in p]
        for p in parts:
            stem = p.removesuffix(".gin")
            if (name := _t5_gin(stem)) is not None and (hit := known.lookup_model(name)) is not None:
                out.append((hit[0], hit[2], where))
        fam_at = next(((i, f.group(1)) for i, p in enumerate(parts) if (f := _FAMILY_PREFIX.match(p))), None)
        if fam_at is None:
            continue
        sizes = [p for p in parts[fam_at[0] + 1:] if p in _SIZE_WORDS or re.fullmatch(r"\d+b", p)]
        if len(set(sizes)) == 1 and (hit := known.lookup_model(f"{fam_at[1]}-{sizes[0]}")) is not None:
            out.append((hit[0], hit[2], where))
    return out


def _path_values(P: ParamSpace, args: list[str], args_where: list[str]) -> list[tuple[str, list[str]]]:
    vals: list[tuple[str, list[str]]] = []
    for key, pv in P.items():
        if isinstance(pv.value, str) and "/" in pv.value and not _AUX.search(key) \
                and re.search(r"gin|config|checkpoint|ckpt|init|model|pretrained", key):
            vals.append((pv.value, list(pv.where)))
    for a in args:
        opt, eq, val = a.partition("=")
        if eq and re.search(r"gin_file|gin_config|config|checkpoint|model", opt) and not _AUX.search(opt):
            vals.append((val.strip("'\""), list(args_where)))
    return vals


def named_size(P: ParamSpace, args: list[str] | None = None,
               args_where: list[str] | None = None) -> tuple[str, float, list[str]] | None:
    """(name, parameters, evidence) of the model the settings name, or None when none does or names compete."""
    found = [*_from_depth_keys(P), *_from_model_keys(P), *_from_variable_dirs(P),
             *_from_paths(_path_values(P, list(args or []), list(args_where or ["cmd"])))]
    if not found:
        return None
    sizes = [f[1] for f in found]
    if max(sizes) > AGREE * min(sizes):
        return None  # two different names compete
    name, params, _ = found[0]
    where: list[str] = []
    for f in found:
        where += [w for w in f[2] if w not in where]
    return name, params, where


def fill_params(facts: dict[str, Any], res: Any) -> bool:
    """Set `params` (source `derived`) from `named_size` when it is still null; whether it did."""
    from schedmate.codeprof.facts import Fact

    if facts.get("params") is not None and facts["params"].value is not None:
        return False
    launch = getattr(res, "launch", None)
    got = named_size(res.params, launch.args if launch is not None else [],
                     launch.args_where if launch is not None else [])
    if got is None:
        return False
    facts["params"] = Fact(value=got[1], source="derived", evidence=got[2],
                           note=f"published size of {got[0]}, named by the job's settings")
    return True
