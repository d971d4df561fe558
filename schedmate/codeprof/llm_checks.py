"""Which fields to ask, and the checks an answer passes before it may fill one: bounds, grounding in the excerpt, agreement with the static facts, the self-consistency vote."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from schedmate.codeprof.derive import derive
from schedmate.codeprof.llm_context import (
    _FAMILY_HINTS,
    _FIELD_WORDS,
    _locate,
    _locate_re,
    _number_forms,
    _prose_params,
)
from schedmate.codeprof.llm_fields import (
    ASKABLE,
    GROUNDED_NUMBERS,
)
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.static import StaticResult

TEXT_FAMILIES = {"gpt", "llama", "mistral", "bert", "t5"}


_TOKEN_HINT = re.compile(
    r"token|vocab|nn\.Embedding\(|seq_len|block_size|max_length|attention|Transformer", re.IGNORECASE
)


def _mentions_tokens(res: StaticResult, wd: Workdir) -> bool:
    return any(_TOKEN_HINT.search(wd.read_text(rel) or "") for rel in res.py)


def _entry_prose(res: StaticResult, wd: Workdir) -> str:
    parts = []
    for rel in [res.entry, *res.py]:
        if rel and rel in res.py:
            parts.append(res.py[rel].get("docstring", ""))
            text = wd.read_text(rel) or ""
            parts.extend(line for line in text.splitlines() if line.lstrip().startswith("#"))
    return "\n".join(parts)


# a batch filled up to a number of tokens (fairseq's `--max-tokens`, `--batch-size-tokens`) holds as many
# sequences as fit, so there is no per-device count of sequences to ask for
_TOKEN_BUDGET_KEYS = ("max_tokens", "max_tokens_per_batch", "tokens_per_batch", "batch_size_tokens")


def token_budget(res: StaticResult) -> tuple[str, int] | None:
    """(flag, tokens) when the command line batches by a token budget and names no sequence count."""
    if res.val("micro_batch_size") is not None or res.params.get("batch_size", "max_sentences") is not None:
        return None
    for key in _TOKEN_BUDGET_KEYS:
        pv = res.params.get(key)
        if pv is not None and pv.where == ["cmd"] and isinstance(pv.value, int) and pv.value > 0:
            return "--" + key.replace("_", "-"), pv.value
    return None


def open_fields(res: StaticResult, wd: Workdir) -> list[str]:
    """Askable fields that neither the static pass nor derivation fills."""
    facts = {k: v.model_copy(deep=True) for k, v in res.facts.items()}
    derive(facts, res.dims, res.accum_knob)
    by_tokens = token_budget(res) is not None
    out = []
    for name in ASKABLE:
        if facts.get(name) is not None and facts[name].value is not None:
            continue
        if name == "model_name" and facts.get("model_family") is not None:
            continue  # a family found in the code without a name: the job defines its own model
        if by_tokens and name in ("micro_batch_size", "global_batch_size"):
            continue  # batches by tokens: no sequence count exists to be found
        if name == "parallelism.data" and facts.get("num_gpus") is None:
            continue  # data parallelism needs the GPU count the command did not fix
        if name == "train_steps" and facts.get("epochs") is not None:
            continue
        fam = facts["model_family"].value if facts.get("model_family") is not None else None
        if name == "seq_len" and (
            (fam is not None and fam not in TEXT_FAMILIES) or not _mentions_tokens(res, wd)
        ):
            continue  # images, tabular rows, audio frames: no token sequence length
        if name == "params" and not _prose_params(_entry_prose(res, wd)):
            continue  # only a count written in prose can be read; dims and names are derived statically
        if name == "epochs" and facts.get("train_steps") is not None:
            continue
        out.append(name)
    return out


def check_answer(name: str, value: Any, res: StaticResult, context: str) -> tuple[Any, list[str], str | None]:
    """(value, evidence, None) when the answer is acceptable, else (None, [], reason)."""
    if value is None:
        return None, [], None
    facts = res.facts
    ng = facts["num_gpus"].value if "num_gpus" in facts else None
    if name in GROUNDED_NUMBERS:
        ev = _locate(context, _number_forms(float(value)), _FIELD_WORDS[name])
        if not ev:
            return None, [], f"{value} does not appear in the excerpt beside a {name} setting"
        return int(value), ev, None
    if name == "params":
        stated = _prose_params(context)
        for v, text in stated:
            if abs(v - float(value)) <= 0.05 * v:
                return float(value), _locate(context, [text]) or [], None
        return None, [], f"{value:g} parameters are not stated in the excerpt"
    if name == "parallelism.data":
        if ng is not None and ng <= 1 and value != "none":
            return None, [], f"{value} on {ng} GPU"
        if ng is not None and ng > 1 and value == "none":
            return None, [], f"none on {ng} GPUs"
        needles = {
            "ddp": ["DistributedDataParallel", "DDP"],
            "fsdp": ["FSDP", "fully_shard"],
            "zero": ["deepspeed", "zero"],
            "none": [],
        }[value]
        ev = _locate(context, needles)
        if value != "none" and not ev:
            return None, [], f"no {value} in the excerpt"
        return value, ev, None
    if name == "model_name":
        v = str(value).strip()
        ev = _locate(context, [v, v.rsplit("/", 1)[-1]])
        if not ev:
            return None, [], f"model name {v!r} does not appear in the excerpt"
        return v, ev, None
    if name == "model_family":
        hint = _FAMILY_HINTS.get(value)
        if hint is not None and not re.search(hint, context):
            return None, [], f"family {value} has no sign in the excerpt ({hint})"
        return value, _locate_re(context, hint) if hint else [], None
    return value, [], None


def _vote(values: list[Any]) -> Any:
    vals = [json.dumps(v, sort_keys=True) for v in values if v is not None]
    if not vals:
        return None
    best, n = Counter(vals).most_common(1)[0]
    return json.loads(best) if n > len(values) / 2 else None


def _known_summary(res: StaticResult) -> dict[str, Any]:
    keep = (
        "framework",
        "num_nodes",
        "num_gpus",
        "parallelism.data",
        "model_name",
        "model_family",
        "precision",
    )
    return {k: res.facts[k].value for k in keep if k in res.facts}
