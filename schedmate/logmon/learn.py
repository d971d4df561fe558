"""Making and vetting new rules.

A small model is poor at writing regexes, so a new rule is *synthesised* from the line itself: every number
becomes a numbered slot (`n1`, `n2`, ...), the rest stays literal (whitespace runs become ` +`), anchored
at both ends of the line. The LLM
only says what kind of line it is and which slot means what (`n1` -> `step`); unnamed slots become
non-capturing number patterns. A regex proposed by anyone (the LLM, a person, a stored rule) goes through
`validate_rule` before use: it must compile, pass the static and timed backtracking checks
(`schedmate.logmon.safety`), match the lines it was made from, and, unless it is an error rule, match none
of the known error lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from schedmate.logmon.rules import FIELDS, KNOWN_ERROR_LINES, Rule, valid_kind
from schedmate.logmon.safety import static_problems, timed_check

_NUM = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b", re.IGNORECASE)
NUM_PATTERN = r"[-+]?(?:\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf|NaN|Inf)"
_WORD = re.compile(r"[A-Za-z_]{3,}")

BENIGN_LOOKALIKES: tuple[str, ...] = (
    "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0",
    "UserWarning: Some weights were not used: error_msgs=[] (this is expected)",
    "NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7",
    "NCCL INFO comm 0x5581 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE",
)
"""Lines a learned error rule must not match."""


@dataclass
class Template:
    pattern: str
    slots: list[str]
    """The text of each number slot, in order (slot i is group `n{i+1}` in `pattern`)."""
    needle: str | None


def synthesize(line: str) -> Template:
    """A slot template of the line: numbers -> (?P<nK>NUM), whitespace runs -> ` +`, the rest literal."""
    parts: list[str] = []
    slots: list[str] = []
    pos = 0
    for m in _slot_matches(line):  # digits inside a word (`gpu0`, `rank3`) stay literal, masked by _literal
        parts.append(_literal(line[pos:m.start()]))
        slots.append(m.group())
        parts.append(f"(?P<n{len(slots)}>{NUM_PATTERN})")
        pos = m.end()
    parts.append(_literal(line[pos:]))
    pattern = "".join(parts)
    pattern = pattern.removeprefix(" +")
    pattern = pattern.removesuffix(" +")
    # the needle must be a literal substring of every line of the template: a letter run, digits excluded
    words = sorted(set(_WORD.findall(line)), key=len, reverse=True)
    return Template(pattern=pattern, slots=slots, needle=words[0].lower() if words else None)


def _slot_matches(line: str) -> list[re.Match[str]]:
    out = []
    for m in _NUM.finditer(line):
        if m.start() > 0 and (line[m.start() - 1].isalpha() or line[m.start() - 1] == "_") and \
                m.group().lower() not in ("nan", "inf"):
            continue
        out.append(m)
    return out


def mark_slots(line: str) -> str:
    """The line with `<nK>` before each number slot, as the LLM sees it: `it#<n1>120 | l=<n2>2.31`."""
    parts, pos = [], 0
    for k, m in enumerate(_slot_matches(line), 1):
        parts.append(line[pos:m.start()])
        parts.append(f"<n{k}>{m.group()}")
        pos = m.end()
    parts.append(line[pos:])
    return "".join(parts)


def slot_contexts(line: str) -> list[str]:
    """`120 (after "it#", before " | l=")` for each number slot: what the LLM is asked to name."""
    ms = _slot_matches(line)
    out = []
    for i, m in enumerate(ms):
        left = line[ms[i - 1].end() if i else 0:m.start()][-12:].strip()
        right = line[m.end():ms[i + 1].start() if i + 1 < len(ms) else len(line)][:12].strip()
        parts = []
        if left:
            parts.append(f'after "{left}"')
        if right:
            parts.append(f'before "{right}"')
        out.append(m.group() + (f" ({', '.join(parts)})" if parts else ""))
    return out


_UNIT_RIGHT = [
    (re.compile(r"^\s*(?:it/s|iters?/s)"), "it_s"),
    (re.compile(r"^\s*(?:s/it|s/iter|s/step|s/b|s/batch|sec/it|sec/iter|s per it)"), "s_it"),
    (re.compile(r"^\s*ms\b"), "ms_it"),
    (re.compile(r"^\s*(?:img/s|imgs/s|images/s|samples?/s|samples?/sec|ex/s|examples/s|seq/s)"), "samples_s"),
    (re.compile(r"^\s*(?:tok/s|toks/s|tokens/s|tokens/sec|tps\b)"), "tokens_s"),
]
_KEY_LEFT = [
    (re.compile(r"(?:\bloss|\bl)\s*[=:]?\s*$"), "loss"),
    (re.compile(r"\blr\s*[=:]?\s*$|learning[ _]rate\s*[=:]?\s*$"), "lr"),
    (re.compile(r"(?:\bep|\bepoch)\s*[=:#]?\s*$"), "epoch"),
    (re.compile(r"(?:\bstep|\biter|\biteration|\bit|\bbatch|\bupdate|\bupdates)\s*[=:#]?\s*$|#$"), "step"),
    (re.compile(r"(?:\btps|tok/s|tokens/s)\s*[=:]\s*$"), "tokens_s"),
    (re.compile(r"(?:samples/s|img/s|samples_per_sec)\s*[=:]\s*$"), "samples_s"),
]


def guess_meanings(line: str) -> dict[str, str]:
    """Slot meanings from the text around each number (units after it, keys before it, `a/b` pairs).

    This carries most of the rule learning: measured on Qwen2.5-Coder-0.5B, the model names the line's kind
    well but maps numbers to fields little better than chance, so its slot names only fill gaps (see
    `merge_meanings`)."""
    ms = _slot_matches(line)
    out: dict[str, str] = {}
    for i, m in enumerate(ms):
        slot = f"n{i + 1}"
        if slot in out:
            continue
        left = line[ms[i - 1].end() if i else 0:m.start()].lower()
        right = line[m.end():ms[i + 1].start() if i + 1 < len(ms) else len(line)].lower()
        integer = re.fullmatch(r"[-+]?\d[\d,]*", m.group()) is not None
        if right.strip() == "/" and i + 1 < len(ms) and integer:
            ep = re.search(r"(?:\bep|\bepoch)\s*[=:#]?\s*$", left) is not None
            out[slot] = "epoch" if ep else "step"
            out[f"n{i + 2}"] = "total_epochs" if ep else "total_steps"
            continue
        meaning = next((mn for rx, mn in _UNIT_RIGHT if rx.search(right)), None)
        if meaning is None:
            meaning = next((mn for rx, mn in _KEY_LEFT if rx.search(left)), None)
        if meaning in ("step", "epoch") and not integer:
            meaning = None
        if meaning is not None:
            out[slot] = meaning
    return out


def merge_meanings(guessed: dict[str, str], proposed: dict[str, str], slots: list[str]) -> dict[str, str]:
    """Context evidence wins; a proposed meaning fills a slot without evidence if its value fits the field
    (counters are integers) and the field is not taken yet."""
    out = dict(guessed)
    used = set(out.values())
    for slot, meaning in proposed.items():
        if slot in out or meaning in used or meaning not in FIELDS:
            continue
        k = int(slot[1:]) - 1
        if not 0 <= k < len(slots):
            continue
        if meaning in ("step", "total_steps", "epoch", "total_epochs") and not re.fullmatch(r"\d[\d,]*", slots[k]):
            continue
        out[slot] = meaning
        used.add(meaning)
    return out


def _literal(text: str) -> str:
    out = []
    for chunk in re.split(r"(\s+)", text):
        if not chunk:
            continue
        if chunk.isspace():
            out.append(" +")
        else:
            # digits glued to words vary between lines (`gpu0`): mask them
            out.append(re.sub(r"\\?\d+", r"\\d+", re.escape(chunk)))
    return "".join(out)


def build_rule(line: str, kind: str, meanings: dict[str, str], *, family: str = "", cause: str | None = None,
               source: str = "llm") -> Rule:
    """A rule from a line's template: slot names in `meanings` (`{"n1": "step"}`) become field groups."""
    if not valid_kind(kind):
        raise ValueError(f"unknown rule kind {kind!r}")
    t = synthesize(line)
    # the whole line: a rule made from `td_error:` must not fire inside `mean_td_error: -3.1e9`
    pattern = f"^ *{t.pattern} *$"
    used: set[str] = set()
    for i in range(1, len(t.slots) + 1):
        slot = f"n{i}"
        meaning = meanings.get(slot)
        if meaning in FIELDS and meaning not in used and kind == "progress":
            used.add(meaning)
            pattern = pattern.replace(f"(?P<{slot}>", f"(?P<{meaning}>", 1)
        else:
            pattern = pattern.replace(f"(?P<{slot}>", "(?:", 1)
    name = f"learned-{kind.replace(':', '-')}-{abs(hash(pattern)) % 10**8:08d}"
    return Rule(name=name, pattern=pattern, kind=kind, needles=(t.needle,) if t.needle else (), cause=cause,
                source=source)


@dataclass
class Verdict:
    ok: bool
    reasons: list[str] = field(default_factory=list)


def validate_rule(pattern: str, kind: str, source_lines: Sequence[str], *,
                  known_error_lines: Sequence[str] = (), budget_s: float = 5.0, timed: bool = True) -> Verdict:
    """Accept a proposed rule only if it is safe, matches its lines and does not swallow failures."""
    reasons: list[str] = []
    if not valid_kind(kind):
        return Verdict(False, [f"unknown kind {kind!r}"])
    try:
        rx = re.compile(pattern)
    except re.error as e:
        return Verdict(False, [f"does not compile: {e}"])
    unknown = [g for g in rx.groupindex if g not in FIELDS]
    if unknown:
        reasons.append(f"unknown group names {unknown}")
    reasons += static_problems(pattern)
    if reasons:
        return Verdict(False, reasons)
    missing = [s for s in source_lines if rx.search(s) is None]
    if missing:
        reasons.append(f"does not match {len(missing)} of the {len(source_lines)} lines it was made from, "
                       f"e.g. {missing[0][:120]!r}")
    if kind.startswith("error:"):
        hit = [s for s in BENIGN_LOOKALIKES if rx.search(s)]
        if hit:
            reasons.append(f"an error rule matching a known benign line: {hit[0][:120]!r}")
    else:
        corpus = list(KNOWN_ERROR_LINES) + list(known_error_lines)
        hit = [s for s in corpus if rx.search(s)]
        if hit:
            reasons.append(f"matches a known error line: {hit[0][:120]!r}")
    if not reasons and timed:
        problem = timed_check(pattern, source_lines, budget_s=budget_s)
        if problem:
            reasons.append(problem)
    return Verdict(not reasons, reasons)
