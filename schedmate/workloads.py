"""Catalogue of workload classes with their network sensitivity, from published measurements.

`spread_slowdown` is how many times longer an iteration takes when the job's GPUs are spread over
several nodes (uncontended NICs) instead of packed on one. Sources:

* Pollux (OSDI'21), placement sensitivity: BERT 2.2-3.7x slower spread over nodes, ImageNet with a
  small batch about 2.4x, with a large batch about 1x.
* Gavel (OSDI'20), throughputs on unconsolidated placements relative to consolidated: language
  model (LSTM) 0.1-0.35x, ResNet-50 about 1x, Transformer about 0.5x, ResNet-18 about 0.75x.
* Where no figure was published (marked `assumed`), the value is our estimate from the model's
  communication-to-compute ratio; these are documented as such and can be overridden.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from schedmate.records import MAX_SPREAD_SLOWDOWN


@dataclass(frozen=True)
class WorkloadClass:
    name: str
    spread_slowdown: float
    source: str
    family: str  # cv | nlp | llm | recsys | rl | speech | gan


CATALOGUE: dict[str, WorkloadClass] = {
    w.name: w
    for w in (
        WorkloadClass("resnet50", 1.05, "Gavel: ResNet-50 ~1x unconsolidated; Pollux large-batch ImageNet ~1x", "cv"),
        WorkloadClass("imagenet-small-batch", 2.4, "Pollux: small-batch ImageNet ~2.4x", "cv"),
        WorkloadClass("resnet18", 1.33, "Gavel: ResNet-18 ~0.75x unconsolidated", "cv"),
        WorkloadClass("bert", 3.0, "Pollux: BERT 2.2-3.7x (midpoint)", "nlp"),
        WorkloadClass("lm", MAX_SPREAD_SLOWDOWN, "Gavel: LM 0.1-0.35x unconsolidated (capped at 4x)", "llm"),
        WorkloadClass("gpt", MAX_SPREAD_SLOWDOWN, "large transformer LM, as Gavel LM (capped at 4x)", "llm"),
        WorkloadClass("transformer", 2.0, "Gavel: Transformer ~0.5x unconsolidated", "nlp"),
        WorkloadClass("recommendation", 1.8, "assumed: embedding all-to-all traffic", "recsys"),
        WorkloadClass("cyclegan", 1.1, "assumed: small model, compute bound", "gan"),
        WorkloadClass("a3c", 1.0, "assumed: CPU-bound RL actors, tiny gradients", "rl"),
        WorkloadClass("deepspeech2", 1.6, "assumed: recurrent model, medium gradients", "speech"),
        WorkloadClass("yolov3", 1.5, "assumed: detection model, medium gradients", "cv"),
    )
}

# Share of each class in a generic training mix (assumed; tilted towards CV as in Philly-era
# clusters, with a growing LLM share).
DEFAULT_MIX: dict[str, float] = {
    "resnet50": 0.18,
    "resnet18": 0.14,
    "imagenet-small-batch": 0.08,
    "bert": 0.14,
    "transformer": 0.10,
    "lm": 0.06,
    "gpt": 0.08,
    "recommendation": 0.08,
    "cyclegan": 0.05,
    "a3c": 0.04,
    "deepspeech2": 0.03,
    "yolov3": 0.02,
}

# Gavel job types (its `job_type` column) -> our classes.
GAVEL_JOB_TYPES: dict[str, str] = {
    "ResNet-18": "resnet18",
    "ResNet-50": "resnet50",
    "Transformer": "transformer",
    "LM": "lm",
    "Recommendation": "recommendation",
    "CycleGAN": "cyclegan",
    "A3C": "a3c",
}

# Pollux/Sia application names -> our classes.
POLLUX_APPLICATIONS: dict[str, str] = {
    "bert": "bert",
    "cifar10": "resnet18",
    "imagenet": "imagenet-small-batch",
    "deepspeech2": "deepspeech2",
    "ncf": "recommendation",
    "yolov3": "yolov3",
}


def workload_for_name(name: str | None) -> str | None:
    """Best-effort mapping of a trace's model or job-type name to a catalogue class."""
    if not name:
        return None
    if name in GAVEL_JOB_TYPES:
        return GAVEL_JOB_TYPES[name]
    low = name.lower()
    if low in CATALOGUE:
        return low
    if low in POLLUX_APPLICATIONS:
        return POLLUX_APPLICATIONS[low]
    for key, cls in (
        ("gpt", "gpt"), ("llama", "gpt"), ("pretrain", "gpt"), ("bert", "bert"), ("lm", "lm"),
        ("transformer", "transformer"), ("resnet18", "resnet18"), ("resnet", "resnet50"),
        ("imagenet", "imagenet-small-batch"), ("rec", "recommendation"), ("ctr", "recommendation"),
        ("gan", "cyclegan"), ("rl", "a3c"), ("speech", "deepspeech2"), ("yolo", "yolov3"),
    ):
        if key in low:
            return cls
    return None


def sample_workload(rng: random.Random, num_gpus: int, mix: dict[str, float] | None = None) -> WorkloadClass:
    """Draw a workload class for a job; multi-GPU jobs lean towards the large (sensitive) models."""
    mix = dict(mix or DEFAULT_MIX)
    if num_gpus >= 8:  # big jobs are more often LLM/BERT pre-training
        for k in ("gpt", "lm", "bert"):
            mix[k] = mix.get(k, 0) * 2.0
        mix["a3c"] = 0.0
    names = sorted(mix)
    weights = [mix[n] for n in names]
    return CATALOGUE[rng.choices(names, weights=weights, k=1)[0]]
