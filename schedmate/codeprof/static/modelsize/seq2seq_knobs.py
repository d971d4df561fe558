"""An encoder-decoder transformer over real-valued series, sized from the knobs forecasting code shares.

The long-horizon forecasting repositories (Informer, Autoformer, Non-stationary Transformer and the
libraries that gather them) describe the model by one argparse layout: `d_model`, `n_heads`, `e_layers`,
`d_layers`, `d_ff`, `enc_in`, `dec_in`, `c_out`. Their attention variants (ProbSparse, auto-correlation,
de-stationary attention) keep the four d x d projections of vanilla attention, and their series
decomposition has no weights, so one formula counts them:

    seq2seq_params(d_model=512, d_ff=2048, e_layers=2, d_layers=1, enc_in=7, dec_in=7, c_out=7)
        -> 10.5M (an Autoformer on ETT, as its paper's setting reports)

Each encoder layer: attention (4 d^2 + 4 d) and a two-matrix feed-forward of width d_ff (as 1x1 convs, with
biases), two norms; each decoder layer: self and cross attention, the feed-forward, three norms; inputs
embedded by a 3-wide circular conv without bias (TokenEmbedding) plus a time-feature linear; a final norm per
stack and the output projection. Models whose blocks are not attention over d x d projections (Fourier or
wavelet mixing, patching, pure linear models) are not this formula and are skipped by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedmate.codeprof.static.modelsize.family_knobs import _int  # a positive whole number or None

_SIGNATURE = {"e_layers", "d_model"}
# model names whose blocks are not vanilla attention projections (mixing in frequency space, patches, linear)
_OTHER = ("fedformer", "film", "patchtst", "dlinear", "nlinear", "linear", "timesnet", "micn", "segrnn",
          "timemixer", "tsmixer", "itransformer", "crossformer", "koopa", "lightts", "etsformer", "pyraformer")


def seq2seq_params(d_model: int, d_ff: int, e_layers: int, d_layers: int, enc_in: int = 7, dec_in: int = 7,
                   c_out: int = 7, time_features: int = 4) -> int:
    d = d_model
    attn = 4 * d * d + 4 * d
    ffn = 2 * d * d_ff + d_ff + d
    norm = 2 * d
    enc = e_layers * (attn + ffn + 2 * norm) + norm
    dec = d_layers * (2 * attn + ffn + 3 * norm) + norm if d_layers else 0
    emb = 3 * enc_in * d + time_features * d + ((3 * dec_in * d + time_features * d) if d_layers else 0)
    head = d * c_out + c_out
    return enc + dec + emb + head


# the linear forecasters of the same argparse layout: one (DLinear: two, trend and seasonal) linear map from the
# look-back window to the horizon, shared by all channels unless `individual`
_LINEAR = {"linear": 1, "nlinear": 1, "dlinear": 2}


def _linear_forecaster(model: str, values: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    seq, pred = _int(values.get("seq_len")), _int(values.get("pred_len"))
    if seq is None or pred is None:
        return None
    per = _LINEAR[model] * (seq * pred + pred)
    individual = values.get("individual") is True or values.get("individual") in (1, "True", "true")
    chans = _int(values.get("enc_in")) or 7
    return per * (chans if individual else 1), [k for k in ("model", "seq_len", "pred_len") if k in values]


def seq2seq_from_knobs(values: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    """The formula over one section's knobs (`d_model`, `e_layers` at least; `d_ff` defaults to 4 d_model,
    `d_layers` to 1, channel counts to 7), or None when a knob is missing or the section's `model` names a
    forecaster of another kind. A linear forecaster of the same layout (`Linear`, `NLinear`, `DLinear`) is its
    look-back x horizon maps."""
    if not _SIGNATURE <= set(values):
        return None
    model = str(values.get("model") or values.get("model_name") or "").lower().replace("-", "_")
    if model in _LINEAR:
        return _linear_forecaster(model, values)
    if any(model == o or model.startswith(o) for o in _OTHER):
        return None
    d, e = _int(values.get("d_model")), _int(values.get("e_layers"))
    if d is None or e is None:
        return None
    dff = _int(values.get("d_ff")) or 4 * d
    dl = values.get("d_layers", 1)
    dl = dl if isinstance(dl, int) and not isinstance(dl, bool) and dl >= 0 else 1
    chans = [_int(values.get(k)) or 7 for k in ("enc_in", "dec_in", "c_out")]
    n = seq2seq_params(d, dff, e, dl, *chans)
    return n, [k for k in ("d_model", "e_layers", "d_layers", "d_ff", "enc_in") if k in values]


__all__ = ["seq2seq_from_knobs", "seq2seq_params"]


def params_from_seq2seq_knobs(sp: Any) -> None:
    """Put the formula's count when exactly one section of the job's values (the argparse flags are the top
    level) holds the forecasting knobs."""
    from schedmate.codeprof.static.modelsize.knobs import section_values

    P = sp.r.params
    items = [(k, pv.value) for k, pv in P.items()]
    found: dict[int, list[str]] = {}
    for sec, vals in section_values(items, {"e_layers"}):
        got = seq2seq_from_knobs(vals)
        if got is not None:
            where = [w for k in got[1] if (pv := P.get(f"{sec}.{k}" if sec else k)) is not None for w in pv.where]
            found.setdefault(got[0], where)
    if len(found) == 1:
        n, where = next(iter(found.items()))
        sp.r.put("params", n, list(dict.fromkeys(where)),
                 note="encoder-decoder series transformer from its knobs (d_model, e_layers, d_layers, d_ff)")
