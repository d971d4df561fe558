"""Batch settings in other words and other units: accumulation under a name no table lists, the number of
micro-batches per optimizer step, a per-rank micro-batch, and batch sizes counted in tokens.

* Accumulation goes by many spellings (`grad_accumulation`, `gradient_accumulation_steps`, `accum_batches`);
  a setting whose whole name says gradient accumulation is one, when the job gives it a single value.
* `micro_num` (InternLM/InternEvo `data=dict(micro_num=4, micro_bsz=2)`) and Colossal-AI's
  `NUM_MICRO_BATCHES` count the micro-batches each GPU runs before one optimizer step: global batch =
  micro batch x that count x data-parallel size, exactly as accumulation.
* A per-rank micro-batch (`rank_microbatch_size`, `device_microbatch_size`, `microbatch_size_per_gpu`).
* A batch size counted in tokens (the line says so in a comment, or multiplies a count by the sequence
  length: `global_batch_size=256 * SEQUENCE_LENGTH`) is that many tokens; in sequences it is the value
  divided by the sequence length, which is what the batch fields count.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int
from schedmate.codeprof.params import CODE_DEFAULT

ACCUM_NAME = re.compile(
    r"^(?:(?:num|n|nb)_)?(?:grad(?:ient)?s?_?)?accum(?:ulat(?:e|ed|ion|ions))?"
    r"(?:_?(?:steps?|iters?|iterations?|batch(?:es)?|count|counts|every|freq|factor|num|n))?$",
    re.IGNORECASE)
MICRO_BATCHES_PER_STEP = ("micro_num", "num_micro_batches")
"""micro-batches each data-parallel rank runs per optimizer step (accumulation by another name)"""
PER_RANK_MICRO = re.compile(r"^(?:rank|device|local|per_(?:rank|device|gpu))_?micro_?batch(?:_?size)?$|"
                            r"^micro_?batch_?size_per_(?:rank|device|gpu)$", re.IGNORECASE)
_NOT_TRAINING = re.compile(r"eval|valid|(^|[._])val([._]|$)|test|infer|predict|generat|sample", re.IGNORECASE)
_SEQ_WORDS = (r"seq_?len(?:gth)?|max_seq_len(?:gth)?|sequence_?length|max_sequence_length|block_size|"
              r"context_length|ctx_len|max_length")
_TIMES_SEQ = re.compile(rf"\*\s*(?:[A-Za-z_][\w]*\.)*(?:{_SEQ_WORDS})\b|\b(?:{_SEQ_WORDS})\s*\*", re.IGNORECASE)
# a comment that gives the unit (`# in tokens`, `# specified in tokens, not instances`, `# tokens per step`), not
# one that describes a count of sequences (`# 32 x 2048 tokens`)
_TOKENS_COMMENT = re.compile(r"#[^#]*\b(?:in|as)\s+tokens\b|#\s*(?:NOTE:?\s*)?tokens?\b", re.IGNORECASE)
_NOT_TOKENS_COMMENT = re.compile(r"#.*\b(?:not|instead of)\s+(?:in\s+)?tokens?\b", re.IGNORECASE)


# a batch counted in something other than samples: the setting that says so and the units it names (F5-TTS-style
# `batch_size_type: frame`, ESPnet `batch_type: numel|length`); `sample`, `folded`, `sorted` count samples
_UNIT_KEY = re.compile(r"^batch_?(?:size_?)?(?:type|unit|units|by|mode)$", re.IGNORECASE)
_NOT_SAMPLES = {"frame", "frames", "token", "tokens", "numel", "length", "bin", "bins", "duration", "second",
                "seconds", "sec", "secs", "char", "chars", "characters"}


def batches_in_other_units(params: Any) -> list[str]:
    """Mark the batch settings beside a unit setting that counts frames, tokens or seconds as no sample count
    (their value becomes text: the batch fields stay null, and no named number fills them); the marked keys."""
    units = [(key.rpartition(".")[0], pv) for key, pv in params.items()
             if _UNIT_KEY.match(key.rsplit(".", 1)[-1]) and isinstance(pv.value, str)
             and pv.value.strip().lower() in _NOT_SAMPLES]
    marked: list[str] = []
    for parent, unit in units:
        for key, pv in params.items():
            leaf = key.rsplit(".", 1)[-1].lower()
            if key.rpartition(".")[0] != parent or _UNIT_KEY.match(leaf) or "batch" not in leaf:
                continue
            if isinstance(pv.value, int) and not isinstance(pv.value, bool):
                pv.value = f"{pv.value} {unit.value.strip()}"
                marked.append(key)
    return marked


def _single(hits: dict[int, list[str]]) -> tuple[int, list[str]] | None:
    if len(hits) == 1:
        ((v, where),) = hits.items()
        return v, where
    return None


def _scan(params: Any, match: Any, min_value: int) -> tuple[int, list[str]] | None:
    hits: dict[int, list[str]] = {}
    for key, pv in params.items():
        leaf = key.rsplit(".", 1)[-1]
        if pv.layer < CODE_DEFAULT or not match(leaf) or _NOT_TRAINING.search(key):
            continue
        v = to_int(pv.value)
        if isinstance(pv.value, bool) or v is None or v < min_value:
            continue
        hits.setdefault(v, list(pv.where))
    return _single(hits)


def accumulation_by_name(params: Any) -> tuple[int, list[str]] | None:
    """Gradient accumulation under a name that says so, or micro-batches per step; None when absent or
    when settings disagree."""
    return (_scan(params, lambda leaf: leaf.lower() in MICRO_BATCHES_PER_STEP, 1)
            or _scan(params, ACCUM_NAME.match, 0))


def per_rank_micro(params: Any) -> tuple[int, list[str]] | None:
    return _scan(params, PER_RANK_MICRO.match, 1)


def counted_in_tokens(line: str) -> bool:
    """Does this source line state a batch in tokens: a comment saying so, or a product with the sequence
    length?"""
    if _NOT_TOKENS_COMMENT.search(line):
        return False
    code = line.split("#", 1)[0]
    return bool(_TIMES_SEQ.search(code) or _TOKENS_COMMENT.search(line))


def line_at(wd: Any, where: str) -> str | None:
    rel, sep, num = where.rpartition(":")
    if not sep or not num.isdigit():
        return None
    lines = (wd.read_text(rel) or "").splitlines()
    n = int(num)
    return lines[n - 1] if 0 < n <= len(lines) else None


def in_sequences(wd: Any, value: Any, where: list[str], seq: Any) -> int | None:
    """`value` in sequences when its first source line counts it in tokens and the sequence length divides
    it; None otherwise (the value is kept as it is)."""
    v, s = to_int(value), to_int(seq)
    if not v or not s or s <= 1 or v % s or not where:
        return None
    line = line_at(wd, where[0])
    return v // s if line is not None and counted_in_tokens(line) else None


def _keyword_line(wd: Any, rel: str, start: int, key: str) -> tuple[str, str]:
    """(`file:line`, text) of the line a call's keyword is written on: the call's own line or one of the
    lines after it (a keyword per line), else the call's line."""
    lines = (wd.read_text(rel) or "").splitlines()
    pat = re.compile(rf"\b{re.escape(key)}\s*=")
    for n in range(max(start, 1), min(start + 40, len(lines)) + 1):
        if pat.search(lines[n - 1].split("#", 1)[0]):
            return f"{rel}:{n}", lines[n - 1]
    return f"{rel}:{start}", lines[start - 1] if 0 < start <= len(lines) else ""


class BatchUnitsMixin:
    """Turns global and micro batch facts stated in tokens into sequences (run after the sequence length)."""

    def _batches_in_other_units(self) -> None:
        for key in batches_in_other_units(self.r.params):  # type: ignore[attr-defined]
            self.r.notes.append(f"{key}: the batch counts frames, tokens or seconds, not samples")  # type: ignore[attr-defined]

    def _batches_in_tokens(self) -> None:
        r = self.r  # type: ignore[attr-defined]
        seq = r.facts.get("seq_len")
        if seq is None:
            return
        self._token_keywords(seq.value, seq.evidence)
        for name in ("global_batch_size", "micro_batch_size"):
            f = r.facts.get(name)
            if f is None:
                continue
            got = in_sequences(self.wd, f.value, f.evidence, seq.value)  # type: ignore[attr-defined]
            if got is not None:
                r.put(name, got, [*f.evidence, *seq.evidence],
                      note=f"{f.value} tokens / sequence length {seq.value} = {got} sequences")

    def _token_keywords(self, seq: Any, seq_where: list[str]) -> None:
        """A batch passed as a keyword of a config or loader call and counted in tokens
        (`DataLoaderConfig(global_batch_size=256 * SEQ_LEN)`, `rank_microbatch_size=16 * 1024  # tokens`):
        the batch field in sequences, when nothing else set it."""
        from schedmate.codeprof.static.names import GLOBAL, MICRO

        r, s = self.r, to_int(seq)  # type: ignore[attr-defined]
        if not s or s <= 1:
            return
        found: dict[str, dict[int, list[str]]] = {"global_batch_size": {}, "micro_batch_size": {}}
        for rel, c in self.calls:  # type: ignore[attr-defined]
            for key, expr in c["kwargs"].items():
                name = ("global_batch_size" if key in GLOBAL else
                        "micro_batch_size" if key in MICRO or PER_RANK_MICRO.match(key) else None)
                if name is None or not isinstance(expr, str):
                    continue
                where, line = _keyword_line(self.wd, rel, c["line"], key)  # type: ignore[attr-defined]
                if not (_TIMES_SEQ.search(expr) or counted_in_tokens(line)):
                    continue
                ok, v, ev = self._resolver.eval(expr)  # type: ignore[attr-defined]
                v = to_int(v) if ok else None
                if v and v % s == 0:
                    found[name].setdefault(v // s, [where, *ev])
        for name, hits in found.items():
            one = _single(hits)
            if one is not None and r.facts.get(name) is None:
                r.put(name, one[0], [*one[1], *seq_where], note=f"stated in tokens; / sequence length {s}")
