"""Is a proposed regex safe to run on every line of every log? Two independent checks.

1. Static (`static_problems`): walk the parse tree of Python's own regex parser (`re._parser`) and reject
   - a repeat (max > 1) whose body contains any other quantifier or an optional alternative: nested
     quantifiers, `(a+)+`, `(.*)*`, `(\\w+\\s?)*`, `(a?a)+`, `(a|aa)*` (which Python parses as `(a(?:|a))*`);
   - a repeat (max > 1) over an alternation whose branches can start with the same character:
     `(a|ab)*`, `(\\d|\\w)+`;
   - two unbounded repeats next to each other that can match the same characters, with nothing
     mandatory between them: `\\d+\\d*`, `.*.*`, `\\s*\\s+` (polynomial backtracking).
   Character overlaps are decided on a sample alphabet (printable ASCII, tab, newline, one non-ASCII).
2. Dynamic (`timed_check`): run the regex with a hard wall-clock budget in a separate Python process on
   adversarial inputs (the lines the rule was made from, repeated and truncated near the end; long runs of
   each literal and character class in the pattern followed by a character that breaks the match). The child
   is killed when the budget is exceeded; a timeout rejects the rule. A subprocess (not a thread) is used
   because CPython's `re` cannot be interrupted from inside the process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence

try:  # Python 3.11+
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

ALPHABET = [chr(i) for i in range(32, 127)] + ["\t", "\n", "\u00e9"]
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None))
_MAXREPEAT = _c.MAXREPEAT


def _cat_match(cat: object, ch: str) -> bool:
    name = str(cat)
    if "NOT_DIGIT" in name:
        return not ch.isdigit()
    if "DIGIT" in name:
        return ch.isdigit()
    if "NOT_WORD" in name:
        return not (ch.isalnum() or ch == "_")
    if "WORD" in name:
        return ch.isalnum() or ch == "_"
    if "NOT_SPACE" in name:
        return not ch.isspace()
    if "SPACE" in name:
        return ch.isspace()
    if "NOT_LINEBREAK" in name:
        return ch != "\n"
    return True


def _atom_set(op: object, av: object) -> set[str] | None:
    """Characters of the sample alphabet the atom can match, or None when it is not a one-char atom."""
    if op is _c.LITERAL:
        return {chr(av)}  # type: ignore[arg-type]
    if op is _c.NOT_LITERAL:
        return {ch for ch in ALPHABET if ord(ch) != av}
    if op is _c.ANY:
        return {ch for ch in ALPHABET if ch != "\n"}
    if op is _c.IN:
        negate = False
        out: set[str] = set()
        for iop, iav in av:  # type: ignore[union-attr]
            if iop is _c.NEGATE:
                negate = True
            elif iop is _c.LITERAL:
                out.add(chr(iav))
            elif iop is _c.RANGE:
                lo, hi = iav
                out |= {ch for ch in ALPHABET if lo <= ord(ch) <= hi}
            elif iop is _c.CATEGORY:
                out |= {ch for ch in ALPHABET if _cat_match(iav, ch)}
        return {ch for ch in ALPHABET if ch not in out} if negate else out
    if op is _c.CATEGORY:
        return {ch for ch in ALPHABET if _cat_match(av, ch)}
    return None


def _first_set(items: Sequence[tuple[object, object]]) -> tuple[set[str], bool]:
    """(possible first characters, whether the sequence can match empty)."""
    out: set[str] = set()
    for op, av in items:
        s = _atom_set(op, av)
        if s is not None:
            return out | s, False
        if op in _REPEATS:
            lo, _hi, sub = av  # type: ignore[misc]
            fs, empty = _first_set(list(sub))
            out |= fs
            if lo > 0 and not empty:
                return out, False
            continue
        if op is _c.SUBPATTERN:
            fs, empty = _first_set(list(av[-1]))  # type: ignore[index]
            out |= fs
            if not empty:
                return out, False
            continue
        if op is _c.BRANCH:
            any_empty = False
            for alt in av[1]:  # type: ignore[index]
                fs, empty = _first_set(list(alt))
                out |= fs
                any_empty |= empty
            if not any_empty:
                return out, False
            continue
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue
        return set(ALPHABET), False  # group references and the like: assume anything
    return out, True


def _contains_repeat(items: Iterable[tuple[object, object]]) -> bool:
    for op, av in items:
        if op in _REPEATS:
            return True  # even `?`: `(a?a)+` is as ambiguous as `(a+)+`
        elif op is _c.SUBPATTERN:
            if _contains_repeat(av[-1]):  # type: ignore[index]
                return True
        elif op is _c.BRANCH:
            if any(not alt or _contains_repeat(alt) for alt in av[1]):  # type: ignore[index]
                return True  # an empty alternative is an optional part, as ambiguous as a quantifier
        elif op in (_c.ASSERT, _c.ASSERT_NOT) and _contains_repeat(av[1]):  # type: ignore[index]
            return True
    return False


def _branches(items: Sequence[tuple[object, object]]) -> list[list[list[tuple[object, object]]]]:
    out = []
    for op, av in items:
        if op is _c.BRANCH:
            out.append([list(a) for a in av[1]])  # type: ignore[index]
        elif op is _c.SUBPATTERN:
            out.extend(_branches(list(av[-1])))  # type: ignore[index]
        elif op is _c.IN or op is _c.LITERAL:
            pass
    return out


def _unbounded_set(op: object, av: object) -> set[str] | None:
    if op in _REPEATS:
        _lo, hi, sub = av  # type: ignore[misc]
        if hi == _MAXREPEAT or hi > 16:
            sub = list(sub)
            if len(sub) == 1:
                s = _atom_set(*sub[0])
                if s is not None:
                    return s
            return _first_set(sub)[0]
    return None


def _walk(items: Sequence[tuple[object, object]], problems: list[str]) -> None:
    items = list(items)
    prev: set[str] | None = None
    for op, av in items:
        cur = _unbounded_set(op, av)
        if cur is not None and prev is not None and (cur & prev):
            problems.append("two adjacent unbounded quantifiers can match the same characters (polynomial "
                            "backtracking)")
        if cur is not None:
            prev = cur
        else:
            # anything mandatory (a literal, a class, a group with a minimum) separates two repeats
            if op in _REPEATS:
                if av[0] > 0:  # type: ignore[index]
                    prev = None
            elif op not in (_c.AT,):
                prev = None
        if op in _REPEATS:
            _lo, hi, sub = av  # type: ignore[misc]
            sub = list(sub)
            if hi > 1 or hi == _MAXREPEAT:
                if _contains_repeat(sub):
                    problems.append("nested quantifier: a repeated group contains another quantifier")
                for alts in _branches(sub):
                    sets = [_first_set(a)[0] for a in alts]
                    for i in range(len(sets)):
                        for j in range(i + 1, len(sets)):
                            if sets[i] & sets[j]:
                                problems.append("alternation with overlapping branches under a quantifier")
                                break
                        else:
                            continue
                        break
            _walk(sub, problems)
        elif op is _c.SUBPATTERN:
            _walk(list(av[-1]), problems)  # type: ignore[index]
        elif op is _c.BRANCH:
            for alt in av[1]:  # type: ignore[index]
                _walk(list(alt), problems)
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            _walk(list(av[1]), problems)  # type: ignore[index]


def static_problems(pattern: str) -> list[str]:
    """Reasons the pattern may backtrack catastrophically (empty list: none found)."""
    try:
        tree = _sre_parse.parse(pattern)
    except re.error as e:
        return [f"does not compile: {e}"]
    problems: list[str] = []
    _walk(list(tree), problems)
    return sorted(set(problems))


_CHILD = r"""
import json, re, sys
d = json.load(sys.stdin)
rx = re.compile(d["pattern"], d["flags"])
for s in d["inputs"]:
    rx.search(s)
print("ok")
"""


def adversarial_inputs(pattern: str, lines: Sequence[str] = (), n: int = 3000) -> list[str]:
    """Inputs likely to expose super-linear backtracking in `pattern`."""
    out: list[str] = []
    literals = {ch for ch in re.sub(r"\\.", "", pattern) if ch.isprintable() and ch not in "()[]{}?*+|^$\\"}
    for ch in sorted(literals)[:40]:
        out.append(ch * n + "\u0000")
    for unit in ("a", "1", " ", "0.", "1,", "a1", "=", "|", ": ", "a ", "1 ", "\t"):
        out.append(unit * (n // len(unit)) + "\u0000")
    for line in lines[:5]:
        if not line:
            continue
        out.append(line * max(1, n // max(1, len(line))) + "\u0000")
        k = max(1, len(line) * 4 // 5)
        mid = line[k // 2: k] or line
        out.append(line[:k] + mid * max(1, n // max(1, len(mid))) + "\u0000")
    return out


def timed_check(pattern: str, lines: Sequence[str] = (), budget_s: float = 5.0, flags: int = 0) -> str | None:
    """Run the regex on adversarial inputs in a child process; a problem message, or None if within budget."""
    payload = json.dumps({"pattern": pattern, "flags": flags, "inputs": adversarial_inputs(pattern, lines)})
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=payload, capture_output=True, text=True,
                              timeout=budget_s, check=False)
    except subprocess.TimeoutExpired:
        return f"exceeded the {budget_s:.1f} s budget on adversarial input (catastrophic backtracking)"
    if proc.returncode != 0 or "ok" not in proc.stdout:
        return f"failed on adversarial input: {proc.stderr.strip()[-200:]}"
    return None
