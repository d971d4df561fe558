"""Run length read against the argparse help text: a step option documented as a model's inner iterations is
not the run length, and then the option documented as the training iterations (or epochs) is.

Research scripts often name a model knob like a run length: a gated graph network's `--step` ("gnn
propagation steps"), a flow's `--n_iters` of its fixed-point solver, a refinement network's `--iterations`.
The static pass takes such an option for `train_steps` by its name, and then ignores the epoch option beside
it (`--epoch`, "the number of epochs to train for") because a step count wins over epochs. This pass looks
at the help text of the option the step count came from: when the help describes an iteration inside the
model (propagation, message passing, diffusion timesteps, refinement, an ODE solver, unrolling) and says
nothing of training (or names a ray's samples: `--max_steps`, "max num steps sampled per ray"), the step count
is dropped; the steps then come from the one option whose help says it counts the training iterations
(`--iters`, "training iters"), else the epochs from the one whose help says it counts the training epochs
(command-line value first, else its default).
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.static.result import StaticResult

# an iteration inside the model, not over the data
_INNER = re.compile(r"prop[ao]gat|message[- ]passing|diffusion|denois|timesteps?\b|refine|unroll|\bode\b|solver|"
                    r"\bhops?\b|recurren|fixed[- ]point|sinkhorn|inner|per ray\b|ray ?march", re.IGNORECASE)
# words that tie an option to the training run itself
_TRAINING = re.compile(r"train|optimi[sz]|gradient|update|total|run\b|max(imum)? (number of )?(steps|iter)",
                       re.IGNORECASE)
_EPOCH_NAME = re.compile(r"^(?:(?:max|total|num|n|nb|train|training)_?)*(?:epochs?|nepochs?|n_ep)$", re.IGNORECASE)
_EPOCH_HELP = re.compile(r"\bepochs?\b", re.IGNORECASE)
_STEP_NAME = re.compile(r"^(?:(?:max|total|num|n|train|training)_?)*(?:iters?|iterations|steps)$", re.IGNORECASE)
_STEP_HELP = re.compile(r"\b(?:iters?|iterations|steps)\b", re.IGNORECASE)
_NOT_RUN = re.compile(r"warm|decay|patience|save|eval|valid|test|log|print|every|interval|start|resume",
                      re.IGNORECASE)


def option_at(res: StaticResult, where: str) -> dict[str, Any] | None:
    """The argparse option defined at `file:line`, or None."""
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit():
        return None
    summary = res.py.get(path)
    if not summary:
        return None
    return next((a for a in summary.get("argparse", []) if a.get("line") == int(line)), None)


def _inner_iterations(option: dict[str, Any]) -> bool:
    text = option.get("help") or ""
    return bool(_INNER.search(text)) and not _TRAINING.search(text)


def _epoch_option(res: StaticResult) -> tuple[int, list[str]] | None:
    """The one option named like an epoch count whose help says it counts training epochs, with its value."""
    return _documented_option(res, _EPOCH_NAME, _EPOCH_HELP)


def _documented_option(res: StaticResult, name: re.Pattern[str], help_word: re.Pattern[str],
                       inner_too: bool = True) -> tuple[int, list[str]] | None:
    """The one option whose name matches `name` and whose help says it counts that unit of training."""
    found: list[tuple[int, list[str]]] = []
    for path, summary in res.py.items():
        for a in summary.get("argparse", []):
            dest, text = str(a.get("dest") or ""), a.get("help") or ""
            if not name.match(dest) or not help_word.search(text) or not re.search(r"train", text, re.I) \
                    or _NOT_RUN.search(dest) or _NOT_RUN.search(text) or (not inner_too and _INNER.search(text)):
                continue
            pv = res.params.get(dest)
            value = pv.value if pv is not None else a.get("default")
            where = list(pv.where) if pv is not None else [f"{path}:{a.get('line')}"]
            if isinstance(value, str) and value.strip().isdigit():
                value = int(value.strip())
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                found.append((value, where))
    return found[0] if len({v for v, _ in found}) == 1 else None


def recheck_run_length(facts: dict[str, Fact], res: StaticResult) -> dict[str, Fact]:
    """Drop a `train_steps` read from an option documented as the model's inner iterations, and take the
    epochs from the option documented as the training epochs. Returns `facts` (changed in place); the reason
    is added to `res.notes` once."""
    steps = facts.get("train_steps")
    if steps is None or steps.value is None or len(steps.evidence) != 1:
        return facts
    option = option_at(res, steps.evidence[0])
    if option is None or not _inner_iterations(option):
        return facts
    del facts["train_steps"]
    note = (f"train_steps: {steps.evidence[0]} --{option.get('dest')} is documented as {option.get('help')!r}: "
            "an iteration inside the model, not the run length")
    if note not in res.notes:
        res.notes.append(note)
    if (steps_opt := _documented_option(res, _STEP_NAME, _STEP_HELP, inner_too=False)) is not None:
        facts["train_steps"] = Fact(value=steps_opt[0], source="static", evidence=steps_opt[1],
                                    note="the option documented as the training iterations")
        return facts
    if facts.get("epochs") is None or facts["epochs"].value is None:
        epochs = _epoch_option(res)
        if epochs is not None:
            facts["epochs"] = Fact(value=epochs[0], source="static", evidence=epochs[1],
                                   note="the option documented as the training epochs")
    return facts
