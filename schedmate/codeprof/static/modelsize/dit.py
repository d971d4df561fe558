"""Diffusion transformers (DiT, Peebles & Xie 2023, and the many ports that keep its layout) from their knobs:
a ViT's blocks plus adaptive-norm modulation (one `width -> 6 x width` projection per block), a timestep MLP, a
class-label table and a modulated final layer; positions are fixed sin-cos tables, not parameters.

    dit_params(patch=2, dim=768, depth=12) -> 130.5M   (DiT-B/2, published 130M)

A job's knobs describe a DiT when the section carries its own knobs (`learn_sigma`, `class_dropout_prob`) or the
job builds a class of that name (`DiT(...)`, `SiT(...)`, `DiffusionTransformer(...)`).
"""

from __future__ import annotations

import re
from typing import Any

DIT_CLASS = re.compile(r"(^|\.)(DiT|SiT|DiffusionTransformer)\w*$")
DIT_KNOBS = frozenset({"learn_sigma", "class_dropout_prob"})


def dit_params(patch: int, dim: int, depth: int, mlp_ratio: float = 4.0, in_ch: int = 4, classes: int = 1000,
               learn_sigma: bool = True, freq_dim: int = 256) -> int:
    """Trainable parameters of a DiT (latent input of `in_ch` channels; `learn_sigma` doubles the output)."""
    hid = int(dim * mlp_ratio)
    out_ch = in_ch * 2 if learn_sigma else in_ch
    embed = patch * patch * in_ch * dim + dim
    t_mlp = freq_dim * dim + dim + dim * dim + dim
    labels = (classes + 1) * dim if classes else 0  # one extra row for the dropped (unconditional) label
    block = (3 * dim * dim + 3 * dim) + (dim * dim + dim) + (dim * hid + hid) + (hid * dim + dim) \
        + (dim * 6 * dim + 6 * dim)
    final = dim * 2 * dim + 2 * dim + dim * patch * patch * out_ch + patch * patch * out_ch
    return embed + t_mlp + labels + depth * block + final


def builds_dit(calls: list[tuple[str, dict[str, Any]]], active: Any) -> bool:
    """Whether a call on the run's path builds a class named like a diffusion transformer."""
    return any(DIT_CLASS.search(str(c.get("func", ""))) and active(c) is not False for _, c in calls)


__all__ = ["DIT_CLASS", "DIT_KNOBS", "builds_dit", "dit_params"]
