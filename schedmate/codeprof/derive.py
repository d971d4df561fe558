"""Derived quantities: defaults the code implies, parameter count, work, communication, sensitivity.

Rules (documented in `schedmate analyze code --help`):
* tensor/pipeline/expert/context parallel degree is 1 when no source names it; gradient accumulation
  is 1 when the job has no accumulation setting at all; global batch = micro x accumulation x DP
  (DP = GPUs / (TP x PP x CP)), accumulation = global / (micro x DP) when the global is explicit, and
  micro = global / (accumulation x DP) when only the total batch is stated.
* parameters: a known model name (table in `known.py`), else the architecture dims:
  L x (4d^2 + k d f) + V d (+ positions), with f = 4d and k = 2 unless an FFN size is given (k = 3 for
  llama-style SwiGLU, x experts for MoE); V defaults to the family's usual tokenizer when unknown.
* work per iteration: 6 x params x tokens (transformers: tokens = global batch x sequence length);
  vision models from the forward GFLOPs per sample of the known-model table (x3 for backward).
* communication per GPU per iteration: gradient all-reduce 2 (n-1)/n x P/(TP PP) x bytes for DDP and
  ZeRO-1/2; 3 (n-1)/n x ... for ZeRO-3/FSDP (extra parameter all-gathers, the ZeRO paper's 1.5x);
  plus TP activation all-reduces (4 per layer per micro batch) and PP boundary activations.
* spread slowdown: 1.0 on <= 1 GPU; else the published slowdown of the family's workload class in
  `schedmate.workloads.CATALOGUE` (resnet 1.05, bert 3.0, gpt/llama 4.0, ...); with no known family, an
  estimate from communication / compute at 12.5 GB/s between nodes and 40 TFLOP/s per GPU with half of
  the communication hidden under backward. Tensor parallelism wider than a node always gives the cap.
  network_sensitivity = `schedmate.records.sensitivity_from_slowdown`; comm_heavy = sensitivity >= 0.5.
"""

from __future__ import annotations

from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.facts import Fact
from schedmate.records import MAX_SPREAD_SLOWDOWN, sensitivity_from_slowdown
from schedmate.workloads import CATALOGUE

FWD_GFLOPS_PER_SAMPLE = {
    "resnet18": 1.8,
    "resnet34": 3.6,
    "resnet50": 4.1,
    "resnet101": 7.8,
    "resnet152": 11.5,
    "vit-base": 17.6,
    "vit-large": 61.6,
    "vgg16": 15.5,
    "mobilenet_v2": 0.3,
    "efficientnet_b0": 0.39,
}
DEFAULT_VOCAB = {"gpt": 50257, "bert": 30522, "t5": 32128, "llama": 32000, "mistral": 32000}
DIMS_DESCRIBE_MODEL = {"gpt", "llama", "mistral", "bert", "t5", "vit"}
MIN_PARAMS_FROM_DIMS = 1e6
PLACEHOLDER_VOCAB = 1
"""a vocabulary this small is no token table: the model takes its input embeddings from outside"""
"""without a vocabulary, a transformer smaller than this is a block's dims read as a model's, not a model"""
INTER_NODE_BYTES_PER_S = 12.5e9
GPU_FLOPS = 40e12
COMM_HIDDEN = 0.5
COMM_HEAVY_SENSITIVITY = 0.5


def _ev(facts: dict[str, Fact], *names: str) -> list[str]:
    out: list[str] = []
    for n in names:
        f = facts.get(n)
        if f is not None:
            out.extend(x for x in f.evidence if x not in out)
    return out


def _v(facts: dict[str, Fact], name: str) -> Any:
    f = facts.get(name)
    return None if f is None else f.value


def _put(facts: dict[str, Fact], name: str, value: Any, evidence: list[str], note: str) -> None:
    if value is not None and facts.get(name) is None:
        facts[name] = Fact(value=value, source="derived", evidence=evidence, note=note)


def params_from_dims(
    dims: dict[str, tuple[Any, list[str]]], family: str | None
) -> tuple[float, list[str]] | None:
    L = dims.get("layers")
    d = dims.get("hidden")
    if not L or not d or not isinstance(L[0], int) or not isinstance(d[0], int):
        return None
    layers, hidden = L[0], d[0]
    ev = [*L[1], *d[1]]
    ffn = dims.get("ffn")
    experts = dims.get("experts")
    n_exp = experts[0] if experts and isinstance(experts[0], int) and experts[0] > 0 else 1
    if ffn and isinstance(ffn[0], int):
        k = 3 if family in {"llama", "mistral"} else 2
        mlp = k * hidden * ffn[0]
        ev += ffn[1]
    else:
        mlp = 8 * hidden * hidden
    vocab = dims.get("vocab")
    V = vocab[0] if vocab and isinstance(vocab[0], int) else DEFAULT_VOCAB.get(family or "", 0)
    if vocab:
        ev += vocab[1]
    if experts:
        ev += experts[1]
    emb = V * hidden * (2 if family in {"llama", "mistral"} or dims.get("untied") else 1)
    pos = dims.get("positions")
    if pos and isinstance(pos[0], int) and family in {"gpt", "bert"}:
        emb += pos[0] * hidden
    return float(layers * (4 * hidden * hidden + n_exp * mlp) + emb), ev


def derive(
    facts: dict[str, Fact], dims: dict[str, tuple[Any, list[str]]] | None = None, accum_knob: bool = True
) -> dict[str, Any]:
    """Fill derivable fields of `facts` in place (source `derived`); return the extra quantities."""
    dims = dims or {}
    extras: dict[str, Any] = {}
    fw = _v(facts, "framework")
    if fw is not None or _v(facts, "num_gpus") is not None:
        for name in (
            "parallelism.tensor",
            "parallelism.pipeline",
            "parallelism.expert",
            "parallelism.context",
        ):
            _put(facts, name, 1, [], f"no {name.split('.')[1]} parallelism named by any source")
    ng = _v(facts, "num_gpus")
    tp = _v(facts, "parallelism.tensor") or 1
    pp = _v(facts, "parallelism.pipeline") or 1
    cp = _v(facts, "parallelism.context") or 1
    dp = ng // (tp * pp * cp) if isinstance(ng, int) and ng > 0 and ng % (tp * pp * cp) == 0 else None
    if ng == 0 or (dp is None and _v(facts, "parallelism.data") == "none"):
        dp = 1  # no GPU, or one replica spread over GPUs the sources do not count (device_map="auto")
    if dp is not None:
        extras["data_parallel_size"] = dp
    micro, accum, glob = (
        _v(facts, "micro_batch_size"),
        _v(facts, "grad_accum_steps"),
        _v(facts, "global_batch_size"),
    )
    ev_b = _ev(
        facts,
        "micro_batch_size",
        "num_gpus",
        "parallelism.tensor",
        "parallelism.pipeline",
        "parallelism.context",
    )
    if accum is None and glob and micro and dp and glob % (micro * dp) == 0:
        _put(
            facts,
            "grad_accum_steps",
            glob // (micro * dp),
            ev_b + _ev(facts, "global_batch_size"),
            "global / (micro x data-parallel size)",
        )
    one_replica = _v(facts, "parallelism.data") == "none"
    if _v(facts, "grad_accum_steps") is None and not accum_knob and (fw is not None or (micro and (ng or one_replica))):
        _put(facts, "grad_accum_steps", 1, [], "the code has no gradient-accumulation setting")
    accum = _v(facts, "grad_accum_steps")
    if micro is None and glob and accum and dp and glob % (accum * dp) == 0:
        # a total batch split over the replicas (detectron2 IMS_PER_BATCH, a YOLO --batch-size for all GPUs)
        _put(
            facts,
            "micro_batch_size",
            glob // (accum * dp),
            _ev(facts, "global_batch_size", "grad_accum_steps") + ev_b,
            "global / (accumulation x data-parallel size)",
        )
    if glob is None and micro and accum and dp:
        _put(
            facts,
            "global_batch_size",
            micro * accum * dp,
            ev_b + _ev(facts, "grad_accum_steps"),
            "micro x accumulation x data-parallel size",
        )
    # parameters -----------------------------------------------------------------------------------
    family = _v(facts, "model_family")
    name = _v(facts, "model_name")
    hit = known.lookup_model(name)
    if hit:
        _put(facts, "params", hit[2], _ev(facts, "model_name"), f"known size of {hit[0]}")
    else:
        got = params_from_dims(dims, family)
        # transformer dims describe the whole model for language models and ViTs (or when the config gives the
        # vocabulary); elsewhere they are often a head's (a detector's decoder) and would undercount it. A
        # placeholder vocabulary (`vocab_size=1`: the body is fed `inputs_embeds` built outside the config, a
        # recommender's item tables) says the opposite: the embeddings that hold most weights are elsewhere
        v = dims.get("vocab")
        placeholder = v is not None and isinstance(v[0], int) and v[0] <= PLACEHOLDER_VOCAB
        whole = not placeholder and (family in DIMS_DESCRIBE_MODEL or "vocab" in dims)
        if got and whole and (got[0] >= MIN_PARAMS_FROM_DIMS or "vocab" in dims):
            _put(facts, "params", round(got[0]), got[1], "from architecture dims (L, d, V, FFN, experts)")
    params = _v(facts, "params")
    # work -----------------------------------------------------------------------------------------
    glob = _v(facts, "global_batch_size")
    seq = _v(facts, "seq_len")
    flops = None
    if params and glob and seq and family in {"gpt", "llama", "mistral", "bert", "t5"}:
        flops = 6.0 * params * glob * seq
    elif glob and hit and hit[0] in FWD_GFLOPS_PER_SAMPLE:
        flops = 3.0 * FWD_GFLOPS_PER_SAMPLE[hit[0]] * 1e9 * glob
    if flops:
        extras["flops_per_iter"] = flops
        steps = _v(facts, "train_steps")
        if steps:
            extras["total_flops"] = flops * steps
    # communication --------------------------------------------------------------------------------
    prec = _v(facts, "precision")
    nbytes = 4 if prec in (None, "fp32") else 2
    data = _v(facts, "parallelism.data")
    if params and dp and dp > 1:
        shard_factor = 3.0 if data == "fsdp" or _v(facts, "parallelism.zero_stage") == 3 else 2.0
        comm = shard_factor * (dp - 1) / dp * params / (tp * pp) * nbytes
        hidden = dims.get("hidden", (None,))[0]
        layers = dims.get("layers", (None,))[0]
        if tp > 1 and micro and seq and hidden and layers:
            comm += 4 * 2 * (tp - 1) / tp * micro * seq * hidden * nbytes * (layers / pp) * (accum or 1)
        if pp > 1 and micro and seq and hidden:
            comm += 2 * micro * seq * hidden * nbytes * (accum or 1)
        extras["comm_bytes_per_iter_per_gpu"] = comm
    # sensitivity ----------------------------------------------------------------------------------
    slowdown = None
    ev_s = _ev(facts, "num_gpus", "model_family", "model_name")
    gpn = _v(facts, "gpus_per_node")
    if ng is not None and ng <= 1:
        slowdown = 1.0
        note = "one GPU or none: nothing to spread"
    elif tp > 1 and gpn and tp > gpn:
        slowdown = MAX_SPREAD_SLOWDOWN
        note = "tensor parallel group wider than a node"
    elif ng is not None and family in known.FAMILY_WORKLOAD:
        wl = known.FAMILY_WORKLOAD[family]
        if family == "resnet" and hit and hit[0] in {"resnet18", "resnet34"}:
            wl = "resnet18"
        slowdown = CATALOGUE[wl].spread_slowdown
        note = f"workload class {wl}: {CATALOGUE[wl].source}"
    elif ng is not None and flops and "comm_bytes_per_iter_per_gpu" in extras:
        compute_s = flops / (ng * GPU_FLOPS)
        comm_s = extras["comm_bytes_per_iter_per_gpu"] / INTER_NODE_BYTES_PER_S
        exposed = max(0.0, comm_s - COMM_HIDDEN * compute_s)
        slowdown = min(MAX_SPREAD_SLOWDOWN, 1.0 + exposed / compute_s) if compute_s > 0 else None
        note = "estimated from communication / compute"
        ev_s = _ev(facts, "params", "num_gpus", "global_batch_size", "seq_len")
    if slowdown is not None:
        sens = round(sensitivity_from_slowdown(slowdown), 3)
        extras["spread_slowdown"] = slowdown
        _put(facts, "network_sensitivity", sens, ev_s, note)
        _put(
            facts,
            "comm_heavy",
            sens >= COMM_HEAVY_SENSITIVITY,
            ev_s,
            f"network_sensitivity {sens} {'>=' if sens >= COMM_HEAVY_SENSITIVITY else '<'} "
            f"{COMM_HEAVY_SENSITIVITY}",
        )
    return extras
