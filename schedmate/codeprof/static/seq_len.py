"""The training sequence length a job names (a config/argument key, else a tokenizer call's `max_length`)."""

from __future__ import annotations

from typing import Any

SEQ_KEYS = (
    "seq_length",
    "seq_len",
    "training.seq_len",
    "max_seq_length",
    "max_seq_len",
    "block_size",
    "sequence_length",
    "context_length",
    "encoder_seq_length",
    "max_source_length",
    "ctx_len",
    "max_length",
    "max_len",
    "max_seq",
)


def sequence_length(sp: Any) -> tuple[Any, list[str]] | None:
    """(value, evidence) of the sequence length for a static pass `sp` (its `_first`, `calls`, `_resolver`)."""
    seq = sp._first(SEQ_KEYS)
    if seq is not None:
        return seq
    for rel, c in sp.calls:
        tail = c["func"].rsplit(".", 1)[-1]
        if (tail in {"tokenizer", "tokenize", "tok", "encode", "__call__"} or "truncation" in c["kwargs"]) \
                and "max_length" in c["kwargs"]:
            ok, v, ev = sp._resolver.eval(c["kwargs"]["max_length"])
            if ok and isinstance(v, int):
                return v, [f"{rel}:{c['line']}", *ev]
    return None
