"""A recommender's size from its embedding tables: the per-feature vocabulary sizes times the embedding width.

Click-through and ranking models keep almost all their weights in the sparse tables, and the jobs that train
them state the tables as a list of cardinalities beside one width, in a config, on the command line or as the
keyword arguments of the library call that reads the data:

    slot_size_array=[203931, 18598, ...], embedding_vec_size=16       (HugeCTR-style readers)
    --num_embeddings_per_feature 45833188,36746,... --embedding_dim 128 (DLRM-style flags)

    tables_params([1000, 500, 20], 16) -> 24,320

The dense towers beside the tables are added when their widths are stated as lists (`dense_arch_layer_sizes`,
`over_arch_layer_sizes`, the bottom MLP over the dense features first); otherwise the count is the tables
alone, which is the bulk of such models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schedmate.codeprof.static.modelsize.convnets import mlp_params

CARDINALITIES = ("slot_size_array", "num_embeddings_per_feature", "vocab_sizes", "table_sizes", "cardinalities",
                 "embedding_table_sizes", "feature_cardinalities")
WIDTHS = ("embedding_vec_size", "embedding_dim", "embedding_size", "embed_dim", "emb_dim", "sparse_feature_dim")
_BOTTOM = ("dense_arch_layer_sizes", "bottom_mlp_sizes", "arch_mlp_bot")
_TOP = ("over_arch_layer_sizes", "top_mlp_sizes", "arch_mlp_top")


def _ints(v: Any) -> list[int] | None:
    if isinstance(v, str) and v.replace(",", "").replace("-", "").replace(" ", "").isdigit():
        v = [p for p in v.replace("-", ",").split(",") if p.strip()]
        try:
            v = [int(p) for p in v]
        except ValueError:
            return None
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, int) and not isinstance(x, bool) and x > 0
                                                  for x in v):
        return list(v)
    return None


def tables_params(cardinalities: Sequence[int], width: int, bottom: Sequence[int] | None = None,
                  top: Sequence[int] | None = None, dense_features: int = 13) -> int:
    """Tables plus the stated towers: the bottom MLP over `dense_features` inputs, the top MLP over the
    pairwise interactions of the tables and the bottom output (DLRM's dot interaction)."""
    n = sum(cardinalities) * width
    if bottom:
        n += mlp_params([dense_features, *bottom])
    if top:
        f = len(cardinalities) + 1
        n += mlp_params([f * (f - 1) // 2 + (bottom[-1] if bottom else width), *top])
    return n


def _values(sp: Any, names: Sequence[str]) -> list[tuple[Any, list[str]]]:
    """Every value stated under one of `names`: a config or flag value, or a keyword argument of a call on the
    run's path."""
    out: list[tuple[Any, list[str]]] = []
    for key, pv in sp.r.params.items():
        if key.rsplit(".", 1)[-1] in names:
            out.append((pv.value, list(pv.where)))
    for rel, c in sp.calls:
        for k, expr in (c.get("kwargs") or {}).items():
            if k in names and sp._active(c) is not False:
                ok, v, ev = sp._resolver.eval(expr)
                if ok:
                    out.append((v, [f"{rel}:{c['line']}", *ev]))
    return out


def params_from_embedding_tables(sp: Any) -> None:
    """Put the tables' count when the job states one list of cardinalities (or several that agree) and one
    width."""
    cards = {tuple(v): w for raw, w in _values(sp, CARDINALITIES) if (v := _ints(raw)) and len(v) >= 2}
    widths = {raw: w for raw, w in _values(sp, WIDTHS)
              if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0}
    if len(cards) != 1 or len(widths) != 1:
        return
    (card, cw), (width, ww) = next(iter(cards.items())), next(iter(widths.items()))
    bottom = next((v for raw, _ in _values(sp, _BOTTOM) if (v := _ints(raw))), None)
    top = next((v for raw, _ in _values(sp, _TOP) if (v := _ints(raw))), None)
    sp.r.put("params", tables_params(card, width, bottom, top), list(dict.fromkeys([*cw, *ww])),
             note="embedding tables (cardinalities x width) and the stated dense towers")


__all__ = ["CARDINALITIES", "WIDTHS", "params_from_embedding_tables", "tables_params"]
