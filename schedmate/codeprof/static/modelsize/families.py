"""Published architecture formulas of model families: parameters as a function of the family's knobs.

Each function counts the weights of the architecture as its paper (and the reference implementations that
follow it) defines it, so any repository that describes a model of the family by these knobs gets its size:

    unet_params(ch=128, ch_mult=(1, 2, 2, 2), num_res_blocks=2, attn_resolutions=(16,), resolution=32)
        -> 35.7M, the DDPM CIFAR-10 UNet (also ADM / improved-diffusion with `scale_shift` and `updown`)
    decoder_lm_params(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, gated=True)
        -> 6.74B, LLaMA-2-7B (grouped KV heads, head width, experts, tied embeddings are knobs)
    vit_params(patch=16, dim=768, depth=12) -> 86M, ViT-B/16

Norm layers' scales and biases are counted; buffers (running statistics) are not.
"""

from __future__ import annotations

from collections.abc import Sequence


def _conv(cin: int, cout: int, k: int, bias: bool = True) -> int:
    return cin * cout * k * k + (cout if bias else 0)


def _linear(cin: int, cout: int, bias: bool = True) -> int:
    return cin * cout + (cout if bias else 0)


def _norm(c: int) -> int:
    return 2 * c


def _resblock(cin: int, cout: int, temb: int, scale_shift: bool) -> int:
    """GroupNorm, 3x3 conv, time-embedding projection (doubled for scale-shift norm), GroupNorm, 3x3 conv,
    and a 1x1 skip when the width changes."""
    n = _norm(cin) + _conv(cin, cout, 3) + _linear(temb, 2 * cout if scale_shift else cout)
    n += _norm(cout) + _conv(cout, cout, 3)
    return n + (_conv(cin, cout, 1) if cin != cout else 0)


def _attn(c: int) -> int:
    """GroupNorm, q/k/v (one 1x1 projection to 3c) and the output projection."""
    return _norm(c) + _linear(c, 3 * c) + _linear(c, c)


def unet_params(ch: int, ch_mult: Sequence[int], num_res_blocks: int, attn_resolutions: Sequence[int],
                resolution: int | None = None, in_ch: int = 3, out_ch: int | None = None,
                scale_shift: bool = False, updown: bool = False, num_classes: int | None = None) -> int:
    """The DDPM / ADM denoising UNet: per level `num_res_blocks` residual blocks (attention at the listed
    resolutions) and a downsampling conv (or residual block when `updown`); a middle block (res, attention,
    res); the decoder mirrors it with `num_res_blocks + 1` blocks per level over the concatenated skips.
    With `resolution` unknown, attention is placed at the second level (the usual 16 of a 32 px model)."""
    out_ch = in_ch if out_ch is None else out_ch
    temb = 4 * ch
    levels = len(ch_mult)
    if resolution is None:
        at = {1} if levels > 1 else {0}
    else:
        at = {i for i in range(levels) if resolution // (2 ** i) in set(attn_resolutions)}
    n = _linear(ch, temb) + _linear(temb, temb) + _conv(in_ch, ch, 3)
    if num_classes:
        n += num_classes * temb
    skips = [ch]
    cur = ch
    for i, m in enumerate(ch_mult):
        for _ in range(num_res_blocks):
            n += _resblock(cur, ch * m, temb, scale_shift)
            cur = ch * m
            if i in at:
                n += _attn(cur)
            skips.append(cur)
        if i != levels - 1:
            n += _resblock(cur, cur, temb, scale_shift) if updown else _conv(cur, cur, 3)
            skips.append(cur)
    n += 2 * _resblock(cur, cur, temb, scale_shift) + _attn(cur)
    for i in reversed(range(levels)):
        for _ in range(num_res_blocks + 1):
            n += _resblock(cur + skips.pop(), ch * ch_mult[i], temb, scale_shift)
            cur = ch * ch_mult[i]
            if i in at:
                n += _attn(cur)
        if i != 0:
            n += _resblock(cur, cur, temb, scale_shift) if updown else _conv(cur, cur, 3)
    return n + _norm(cur) + _conv(cur, out_ch, 3)


def decoder_lm_params(layers: int, hidden: int, heads: int | None = None, ffn: int | None = None,
                      vocab: int = 0, kv_heads: int | None = None, head_dim: int | None = None,
                      experts: int = 1, gated: bool = True, tied: bool = False, positions: int = 0,
                      bias: bool = False) -> int:
    """A decoder-only transformer: attention with `heads` query and `kv_heads` key/value heads of width
    `head_dim` (grouped-query attention when fewer KV heads), an MLP of width `ffn` (three matrices when
    gated: SwiGLU/GeGLU of LLaMA, Mistral, Qwen; two otherwise: GPT-2, BERT), `experts` copies of the MLP
    with a router for a mixture of experts, two norms per layer, embeddings (and an output head unless
    tied), learned positions when given."""
    heads = heads or max(1, hidden // 64)
    head_dim = head_dim or hidden // heads
    kv = kv_heads or heads
    q_out = heads * head_dim
    attn = hidden * q_out + 2 * hidden * kv * head_dim + q_out * hidden
    if bias:
        attn += q_out + 2 * kv * head_dim + hidden
    f = ffn or 4 * hidden
    mlp = (3 if gated else 2) * hidden * f + ((f + hidden) if bias and not gated else 0)
    router = hidden * experts if experts > 1 else 0
    norm = hidden * (2 if bias else 1)  # LayerNorm with a bias, RMSNorm without
    per_layer = attn + experts * mlp + router + 2 * norm
    emb = vocab * hidden * (1 if tied else 2) + positions * hidden
    return layers * per_layer + emb + norm


def vit_params(patch: int, dim: int, depth: int, mlp_ratio: float = 4.0, image: int = 224, in_ch: int = 3,
               classes: int = 1000) -> int:
    """A Vision Transformer: patch embedding, class token and learned positions, `depth` pre-norm blocks
    (attention with biases, a two-matrix MLP), a final norm and a classification head."""
    tokens = (image // patch) ** 2 + 1
    n = _conv(in_ch, dim, patch) + dim + tokens * dim
    hid = int(dim * mlp_ratio)
    block = _norm(dim) + _linear(dim, 3 * dim) + _linear(dim, dim) + _norm(dim) + _linear(dim, hid) \
        + _linear(hid, dim)
    return n + depth * block + _norm(dim) + (_linear(dim, classes) if classes else 0)


__all__ = ["decoder_lm_params", "unet_params", "vit_params"]
