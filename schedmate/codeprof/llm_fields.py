"""The fields the LLM may be asked, with the typed, bounded schema each answer must fit, and the pass's budgets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, create_model

from schedmate.codeprof.facts import FAMILIES, Fact

FIELDS_PER_CALL = 4


TOKEN_BUDGET = 1400


CHARS_PER_TOKEN = 3.2


PROMPT_ID = "code_profile"


FamilyLit = Literal[FAMILIES]  # type: ignore[valid-type]


# field -> (schema type, help text for the model, relevance keywords for the context pack)
ASKABLE: dict[str, tuple[Any, str, tuple[str, ...]]] = {
    "model_family": (
        Optional[FamilyLit],  # type: ignore[valid-type]
        "architecture family: "
        + ", ".join(FAMILIES)
        + " (decoder-only LM = gpt; a plain MLP/policy net = mlp)",
        (
            "class ",
            "nn.Module",
            "Model",
            "model",
            "def forward",
            "Transformer",
            "Linear",
            "Conv",
            "Embedding",
        ),
    ),
    "model_name": (
        None,
        "name of the published pretrained model the job loads, exactly as written in the code",
        ("from_pretrained", "model_name", "init_from", "create_model", "models."),
    ),
    "params": (
        None,
        "number of model parameters if the text states it (e.g. '1.3B' -> 1300000000)",
        ("param", "B-", "billion", "M ", "million", "size"),
    ),
    "parallelism.data": (
        Optional[Literal["ddp", "fsdp", "zero", "none"]],
        "how data parallelism is done: ddp, fsdp, zero (DeepSpeed) or none",
        ("DDP", "DistributedDataParallel", "FSDP", "fully_shard", "deepspeed", "strategy"),
    ),
    "epochs": (
        None,
        "number of training epochs the run does",
        ("epoch",),
    ),
    "train_steps": (
        None,
        "number of optimizer steps/iterations the run does",
        ("step", "iter", "range(", "while"),
    ),
    "seq_len": (
        None,
        "tokens per training sequence (context/block length)",
        ("seq", "block", "max_len", "context", "length"),
    ),
    "micro_batch_size": (
        None,
        "samples per GPU per step (per-device batch size)",
        ("batch",),
    ),
}


_TYPES = {
    "params": float,
    "epochs": int,
    "train_steps": int,
    "seq_len": int,
    "micro_batch_size": int,
    "model_name": str,
}


# Numbers the model reports must be visible in the excerpt (grounding); these may also be computed.
GROUNDED_NUMBERS = {"epochs", "train_steps", "seq_len", "micro_batch_size"}


def field_model(names: list[str]) -> type[BaseModel]:
    """A pydantic model with just these fields (dots become underscores), all optional and bounded."""
    spec: dict[str, Any] = {}
    for n in names:
        key = n.replace(".", "_")
        inner = _TYPES.get(n)
        if inner is not None:
            spec[key] = (Optional[inner], Field(default=None, **_bounds(n)))  # type: ignore[valid-type]
        else:
            spec[key] = (ASKABLE[n][0], None)
    return create_model("CodeFields", **spec)  # type: ignore[call-overload,no-any-return]


def _bounds(name: str) -> dict[str, Any]:
    return {
        "params": {"ge": 1e3, "le": 2e12},
        "epochs": {"ge": 1, "le": 100000},
        "train_steps": {"ge": 1, "le": 10**9},
        "seq_len": {"ge": 8, "le": 10**7},
        "micro_batch_size": {"ge": 1, "le": 10**7},
        "model_name": {"max_length": 60},
    }.get(name, {})


@dataclass
class LLMOutcome:
    answers: dict[str, Fact] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    warnings: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    def merged(self, static_facts: dict[str, Fact]) -> dict[str, Fact]:
        """Static facts win; LLM answers only fill empty fields."""
        out = dict(static_facts)
        for k, f in self.answers.items():
            if out.get(k) is None or out[k].value is None:
                out[k] = f
        return out
