"""The profile record: every field is a `Fact` with its value, its source and its evidence.

Field names are flat (`parallelism.tensor`); `CodeProfile.to_contract()` nests them into the stable
JSON shape printed by `schedmate analyze code --json`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Source = Literal["static", "llm", "derived"]

FRAMEWORKS = (
    "pytorch",
    "lightning",
    "hf-trainer",
    "accelerate",
    "deepspeed",
    "megatron",
    "jax",
    "tensorflow",
)
DATA_PARALLEL = ("ddp", "fsdp", "zero", "none")
PRECISIONS = ("fp32", "fp16", "bf16", "fp8")
FAMILIES = (
    "gpt",
    "llama",
    "mistral",
    "bert",
    "t5",
    "vit",
    "resnet",
    "cnn",
    "unet",
    "dlrm",
    "rnn",
    "mlp",
    "gan",
    "yolo",
)

# The contract fields, flat, in output order.
FIELDS: tuple[str, ...] = (
    "framework",
    "model_family",
    "model_name",
    "params",
    "parallelism.data",
    "parallelism.zero_stage",
    "parallelism.tensor",
    "parallelism.pipeline",
    "parallelism.expert",
    "parallelism.context",
    "num_nodes",
    "gpus_per_node",
    "num_gpus",
    "micro_batch_size",
    "global_batch_size",
    "grad_accum_steps",
    "seq_len",
    "epochs",
    "train_steps",
    "precision",
    "comm_heavy",
    "network_sensitivity",
)
INT_FIELDS = {
    "parallelism.zero_stage",
    "parallelism.tensor",
    "parallelism.pipeline",
    "parallelism.expert",
    "parallelism.context",
    "num_nodes",
    "gpus_per_node",
    "num_gpus",
    "micro_batch_size",
    "global_batch_size",
    "grad_accum_steps",
    "seq_len",
    "epochs",
    "train_steps",
}


class Fact(BaseModel):
    """One field's value, where it came from and the `file:line` (or `cmd`) places that support it."""

    value: Any = None
    source: Source = "static"
    evidence: list[str] = Field(default_factory=list)
    note: str | None = None


class CodeProfile(BaseModel):
    """What the code analyzer believes about a job; unknown fields are absent from `facts`."""

    facts: dict[str, Fact] = Field(default_factory=dict)
    extras: dict[str, Any] = Field(default_factory=dict)
    """Derived quantities beyond the contract (flops, comm bytes, spread slowdown, files read...)."""
    warnings: list[str] = Field(default_factory=list)
    llm_calls: int = 0

    def value(self, field: str) -> Any:
        f = self.facts.get(field)
        return None if f is None else f.value

    def to_contract(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        par: dict[str, Any] = {}
        for name in FIELDS:
            v = self.value(name)
            if name.startswith("parallelism."):
                par[name.split(".", 1)[1]] = v
            else:
                out[name] = v
            if name == "params":
                out["parallelism"] = par
        out["evidence"] = {
            k: {"source": f.source, "where": list(f.evidence), **({"note": f.note} if f.note else {})}
            for k, f in self.facts.items()
            if f.value is not None
        }
        out["llm_calls"] = self.llm_calls
        out["derived"] = dict(self.extras)
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out
