"""A model family read from the layers a job builds itself, when no name, config or class name gives one.

A job that writes its own `nn.Module` out of `nn.Linear` layers only is an MLP (a policy or value net, a
tabular model); one whose model is a bare recurrent layer (`model = nn.LSTM(650, 650, num_layers=2)`) or a
module with recurrent layers and no convolution is an RNN. Anything with a convolution, attention or an
embedding next to them is left open: those mixes (CRNN, conv-LSTM, transformers) have no one family here.
"""

from __future__ import annotations

import re
from typing import Any

_LAYER = re.compile(r"\b(?:torch\.)?nn\.([A-Z]\w*)\(")
_RECURRENT = {"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"}
# layers that carry no architecture of their own: an MLP stays an MLP with them
_NEUTRAL = {"Sequential", "ModuleList", "ModuleDict", "Flatten", "Unflatten", "Dropout", "Identity", "ReLU",
            "Tanh", "Sigmoid", "GELU", "SiLU", "ELU", "LeakyReLU", "Softmax", "LogSoftmax", "Softplus", "Mish",
            "LayerNorm", "BatchNorm1d", "Parameter"}


def _layers(calls: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for c in calls:
        for text in (c["func"] + "(", *map(str, c.get("args", [])), *map(str, c.get("kwargs", {}).values())):
            out.update(_LAYER.findall(text))
    return out


def _family(layers: set[str]) -> str | None:
    if not layers:
        return None
    if layers & _RECURRENT:
        return "rnn" if layers <= _RECURRENT | _NEUTRAL | {"Linear"} else None
    return "mlp" if "Linear" in layers and layers <= _NEUTRAL | {"Linear"} else None


def family_from_layers(py: dict[str, dict[str, Any]], entry: str | None) -> tuple[str, list[str]] | None:
    """(family, evidence) from the job's own nn.Module classes, else from the entry script's top-level layers."""
    found: list[tuple[str, str]] = []
    for rel, s in py.items():
        for cls in s.get("classes", []):
            if not any(b.endswith("Module") for b in cls.get("bases", [])):
                continue
            inside = [c for c in s.get("calls", []) if cls["line"] <= c["line"] <= cls.get("end", cls["line"])]
            found.append((_family(_layers(inside)) or "", f"{rel}:{cls['line']}"))
    if found:
        families = {f for f, _ in found}
        if len(families) == 1 and "" not in families:  # every class agrees; one open class leaves it open
            return families.pop(), [where for _, where in found]
        return None
    if entry and entry in py:
        calls = py[entry].get("calls", [])
        family = _family(_layers(calls))
        if family is not None:
            line = next((c["line"] for c in calls if _LAYER.search(c["func"] + "(")), calls[0]["line"])
            return family, [f"{entry}:{line}"]
    return None
