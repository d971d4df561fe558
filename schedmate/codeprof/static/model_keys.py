"""Models named by an architecture key whose value alone is a family, not a size: the config's other keys
under the same model section complete the name.

- a family and a depth: `MODEL: {NAME: pose_resnet, EXTRA: {NUM_LAYERS: 50}}` -> pose_resnet_50;
- a family and a backbone variant: `MODEL: {NAME: SegFormer, BACKBONE: MiT-B2}` -> segformer-mit-b2, or a
  backbone variant that carries the family itself (`NAME: DDRNet`, `BACKBONE: DDRNet-23slim`);
- a detector whose own classes name its family, built on a backbone picked by a `--backbone` option
  (`class ConditionalDETR` + `--backbone resnet101` -> conditional-detr-r101).

Only a completed name that is a row of the well-known table counts (a wrong number is worse than null).
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.params import CONFIG

_NAME_LEAVES = {"name", "type", "arch", "model_name", "architecture"}
_DEPTH_LEAVES = {"num_layers", "depth", "layers", "backbone_depth", "resnet_depth"}
_VARIANT_LEAVES = {"backbone", "variant", "arch", "backbone_name"}
_WIDTH_LEAVES = {"width_multiplier", "width_factor", "width_mult", "widen_factor"}
_MODEL_SECTION = re.compile(r"(^|\.)(model|network|net|arch)(\.|$)", re.IGNORECASE)
# the model section a key belongs to: the part up to and including its `model`-like component
_SECTION_HEAD = re.compile(r"^(.*?(?:^|\.)(?:model|network|net|arch))(?:\.|$)", re.IGNORECASE)


def _known(name: str) -> bool:
    hit = known.lookup_model(name)
    # a name that only states a size (`x-50m`) is not enough here: the table must know the architecture
    return hit is not None and any(re.search(pat, known.normalise_name(name)) for pat, *_ in known.KNOWN_MODELS)


def _joined(family: str, part: str) -> str | None:
    fam, p = family.strip().lower(), str(part).strip().lower()
    if not re.fullmatch(r"[a-z][\w.-]*", fam):
        return None
    if re.fullmatch(r"[\w.-]+", p) and p.replace("-", "").replace("_", "").startswith(
            fam.replace("-", "").replace("_", "")) and _known(p):
        return p  # the variant already names the family (`DDRNet` + `DDRNet-23slim`)
    for sep in ("_", "-", ""):
        cand = f"{fam}{sep}{p}"
        if _known(cand):
            return cand
    return None


def name_from_model_section(params: Any) -> tuple[str, list[str]] | None:
    """The completed model name and its evidence, or None (see the module docstring)."""
    items = [(k.lower(), pv) for k, pv in params.items()]
    for key, pv in items:
        leaf = key.rsplit(".", 1)[-1]
        if leaf not in _NAME_LEAVES or "." not in key or not _MODEL_SECTION.search(key.rsplit(".", 1)[0] + "."):
            continue
        if not isinstance(pv.value, str) or pv.layer < CONFIG or _known(pv.value):
            continue  # a complete name is read by the name search itself
        m = _SECTION_HEAD.match(key)
        if m is None:
            continue
        under = [(k, v) for k, v in items if k.startswith(m.group(1) + ".") and k != key]
        if any(k.rsplit(".", 1)[-1] in _WIDTH_LEAVES and v.value not in (1, 1.0, None) for k, v in under):
            continue  # a widened network (`WIDTH_MULTIPLIER: 2`) is not the published depth's size
        for k, v in under:
            sub = k.rsplit(".", 1)[-1]
            if sub in _DEPTH_LEAVES and isinstance(v.value, int) and not isinstance(v.value, bool):
                got = _joined(pv.value, str(v.value))
            elif sub in _VARIANT_LEAVES and isinstance(v.value, str):
                got = _joined(pv.value, v.value)
            else:
                continue
            if got is not None:
                return got, pv.where + v.where
    return None


def _family_words(class_names: set[str]) -> list[str]:
    """Dash-separated lower-case spellings of the job's own class names (`ConditionalDETR` ->
    conditional-detr), longest first."""
    out = set()
    for c in class_names:
        words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", c)
        if len(words) >= 1:
            out.add("-".join(w.lower() for w in words))
    return sorted(out, key=len, reverse=True)


def name_from_backbone_option(params: Any, class_names: set[str]) -> tuple[str, list[str]] | None:
    """A detector/segmenter family that one of the job's own classes is named after, completed with the
    ResNet depth a `--backbone` option (or its default) picks, when that combination is a known model."""
    pv = params.get("backbone")
    if pv is None or not isinstance(pv.value, str):
        return None
    m = re.fullmatch(r"(?:resnet|r)-?(\d{2,3})", pv.value.strip().lower())
    if m is None:
        return None
    for fam in _family_words(class_names):
        cand = f"{fam}-r{m.group(1)}"
        if _known(cand):
            return cand, list(pv.where)
    return None


def runs_only_as_program(call: dict[str, Any], rel: str, entry: str | None) -> bool:
    """A call under `if __name__ == "__main__":` of a module that is not the job's entry never runs."""
    return rel != entry and any(
        re.fullmatch(r"""__name__\s*==\s*['"]__main__['"]""", w.strip()) for w in call.get("when", []))
