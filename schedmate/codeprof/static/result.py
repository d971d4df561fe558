"""What the static pass found: facts with evidence, the launch, the parameter space, notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.launch import Launch
from schedmate.codeprof.params import (
    ParamSpace,
)


@dataclass
class StaticResult:
    facts: dict[str, Fact] = field(default_factory=dict)
    launch: Launch | None = None
    params: ParamSpace = field(default_factory=ParamSpace)
    py: dict[str, dict[str, Any]] = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)
    entry: str | None = None
    framework_signals: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    dims: dict[str, tuple[Any, list[str]]] = field(default_factory=dict)
    accum_knob: bool = True
    candidates: list[Any] = field(default_factory=list)
    """named numbers that may stand for a field the pass left null (`codeprof/candidates.py`)"""

    def put(
        self, name: str, value: Any, where: list[str] | str, note: str | None = None, source: str = "static"
    ) -> None:
        if value is None:
            return
        w = [where] if isinstance(where, str) else list(where)
        self.facts[name] = Fact(value=value, source=source, evidence=_dedup(w), note=note)  # type: ignore[arg-type]

    def val(self, name: str) -> Any:
        f = self.facts.get(name)
        return None if f is None else f.value


def _dedup(xs: list[str]) -> list[str]:
    out: list[str] = []
    for x in xs:
        if x and x not in out:
            out.append(x)
    return out


def precision_word(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).lower().replace("torch.", "")
    if s in {"no", "none", "32", "32-true", "fp32", "float32", "false", "64", "64-true"}:
        return "fp32"
    if "fp8" in s or "float8" in s:
        return "fp8"
    if "bf16" in s or "bfloat16" in s:
        return "bf16"
    if s in {"16", "16-mixed", "fp16", "float16", "half", "true", "16-true", "mixed_float16", "amp"}:
        return "fp16"
    if "mixed_bfloat16" in s:
        return "bf16"
    return None
