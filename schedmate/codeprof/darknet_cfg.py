"""Darknet `.cfg` model files: the layer list a YOLO-family job builds its network from, and the `[net]` section's
training settings.

A Darknet cfg is INI-like but repeats section names: `[net]` (or `[network]`) first, with `batch`,
`subdivisions`, `max_batches`, `width`, `height`, `channels`; then one section per layer, in order
(`[convolutional]`, `[shortcut]`, `[route]`, `[upsample]`, `[maxpool]`, `[yolo]`, ...).

Parameter convention (documented, scored within 1.5x): what a PyTorch port trains, which is also the published
figure (YOLOv3 61.9M): a convolution's weights `filters x size x size x in_channels / groups`, plus
`2 x filters` for batch norm's gamma and beta when `batch_normalize=1` (running mean and variance are buffers,
not trained), else `filters` biases. Channels are tracked layer by layer: `route` concatenates the listed
layers' outputs (negative indices relative to the route itself; `groups`/`group_id` keep one slice),
`shortcut` keeps the previous layer's channels, `upsample`/`maxpool`/`avgpool`/`dropout` keep them, `[yolo]`
and `[region]` are heads without weights. Any other layer type (or a malformed one) leaves the count unknown:
a wrong number is worse than none.

`[net]` batch semantics as Darknet defines them: `batch` images per optimizer step, processed in
`subdivisions` forward/backward passes of `batch / subdivisions` images; `max_batches` optimizer steps. Only
used where the job's own training code reads them (`static/darknet_batch.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SECTION = re.compile(r"^\s*\[\s*([A-Za-z_]+)\s*\]\s*$")
_NET = {"net", "network"}
_SAME_CHANNELS = {"upsample", "maxpool", "avgpool", "dropout"}
_HEADS = {"yolo", "region"}


@dataclass
class DarknetCfg:
    net: dict[str, str]
    layers: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    net_lines: dict[str, int] = field(default_factory=dict)


def parse_darknet_cfg(text: str) -> DarknetCfg | None:
    """The sections of a Darknet cfg, or None when the text is not one (its first section must be `[net]`)."""
    sections: list[tuple[str, dict[str, str], dict[str, int]]] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if not line:
            continue
        m = _SECTION.match(line)
        if m:
            sections.append((m.group(1).lower(), {}, {}))
            continue
        if "=" not in line or not sections:
            if not sections:
                return None  # text before the first section: not a Darknet cfg
            continue
        k, _, v = line.partition("=")
        sections[-1][1][k.strip().lower()] = v.strip()
        sections[-1][2][k.strip().lower()] = n
    if not sections or sections[0][0] not in _NET or len(sections) < 2:
        return None
    return DarknetCfg(net=sections[0][1], layers=[(kind, kv) for kind, kv, _ in sections[1:]],
                      net_lines=sections[0][2])


def _int(kv: dict[str, str], key: str, default: int | None = None) -> int | None:
    v = kv.get(key)
    if v is None:
        return default
    try:
        return int(v)
    except ValueError:
        return None


def count_darknet_params(cfg: DarknetCfg) -> int | None:
    """Trainable parameters of the layer list (convention in the module docstring); None on any unknown layer."""
    channels = _int(cfg.net, "channels", 3)
    if channels is None or channels <= 0:
        return None
    outs: list[int] = []
    total = 0
    prev = channels
    for i, (kind, kv) in enumerate(cfg.layers):
        if kind == "convolutional":
            filters, size = _int(kv, "filters", 1), _int(kv, "size", 1)
            groups = _int(kv, "groups", 1)
            bn = _int(kv, "batch_normalize", 0)
            if not filters or not size or not groups or filters <= 0 or size <= 0 or prev % groups:
                return None
            total += filters * size * size * (prev // groups) + (2 * filters if bn else filters)
            out = filters
        elif kind == "route":
            refs = [x.strip() for x in kv.get("layers", "").split(",") if x.strip()]
            got = 0
            for ref in refs:
                try:
                    j = int(ref)
                except ValueError:
                    return None
                j = i + j if j < 0 else j
                if not 0 <= j < i:
                    return None
                got += outs[j]
            groups = _int(kv, "groups", 1)
            if not refs or not groups or groups <= 0 or got % groups:
                return None
            out = got // groups
        elif kind == "shortcut" or kind in _SAME_CHANNELS or kind in _HEADS:
            if i == 0 and kind == "shortcut":
                return None
            out = prev
        else:
            return None
        outs.append(out)
        prev = out
    return total


def net_batch(cfg: DarknetCfg) -> tuple[int, int] | None:
    """(images per optimizer step, subdivisions) from `[net]`, when both are positive and divide evenly."""
    batch, sub = _int(cfg.net, "batch"), _int(cfg.net, "subdivisions", 1)
    if not batch or not sub or batch <= 0 or sub <= 0 or batch % sub:
        return None
    return batch, sub


def net_max_batches(cfg: DarknetCfg) -> int | None:
    """Optimizer steps (`max_batches`), when positive."""
    v = _int(cfg.net, "max_batches")
    return v if v and v > 0 else None
