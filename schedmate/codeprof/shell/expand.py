"""Word expansion as bash does it, without running anything.

Parameter expansion (`$X`, `${X:-d}`, `${X:=d}`, `${X:+a}`, `${#X}`, `${X%p}`, `${X/a/b}`, `${X:o:l}`,
`${A[@]}`, `${!X}`, positional and special parameters), arithmetic `$((...))`, quote removal and field
splitting. Command substitution is never run: `$(...)` is unknown, except for a few pure idioms whose
value follows from the script itself (`$(echo ...)`, `$(dirname ...)`, `$(basename ...)`, `$(pwd)`,
`$(cd "$(dirname "$0")" && pwd)`, `$(expr ...)`).

An unknown value travels inside the expanded text as `\x00NAME\x00`, so whatever consumes a word can
tell it is unknown and say which variable made it so (`unknown_names`).
"""

from __future__ import annotations

import fnmatch
import re

from schedmate.codeprof.shell.arith import _Arith
from schedmate.codeprof.shell.substitution import substitute
from schedmate.codeprof.shell.values import (
    _IDENT,
    MARK,
    ROOT,
    Lookup,
    Unknown,
    anchored,
    is_unknown,
    readable,
    unknown,
    unknown_names,
)


def _match_brace(s: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the `open_` before s[i]."""
    depth = 1
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and open_ != "(":
            pass
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise Unknown("unbalanced")


class _Fields:
    """Fields under construction: pieces that may split (unquoted expansions) and pieces that may not."""

    def __init__(self) -> None:
        self.fields: list[str] = []
        self.cur = ""
        self.started = False

    def lit(self, text: str) -> None:
        self.cur += text
        self.started = True

    def splittable(self, text: str) -> None:
        parts = re.split(r"[ \t\n]+", text)
        if len(parts) == 1:
            self.cur += parts[0]
            self.started = self.started or bool(parts[0])
            return
        self.cur += parts[0]
        if self.started or self.cur:
            self.fields.append(self.cur)
        for p in parts[1:-1]:
            if p:
                self.fields.append(p)
        self.cur = parts[-1]
        self.started = bool(parts[-1])

    def many(self, items: list[str], quoted: bool) -> None:
        """"$@"-style: each item its own field (the first joins the current one)."""
        if not items:
            return
        for k, it in enumerate(items):
            if k:
                self.fields.append(self.cur)
                self.cur = ""
            if quoted:
                self.lit(it)
            else:
                self.splittable(it)

    def done(self) -> list[str]:
        if self.started or self.cur:
            self.fields.append(self.cur)
        return self.fields


def expand_word(word: str, lk: Lookup, split: bool = True) -> list[str]:
    """Fields of a word after expansion, quote removal and (when `split`) field splitting."""
    if word.startswith(("<(", ">(")):
        return [unknown("process substitution")]  # /dev/fd/N of a command that is never run
    out = _Fields()
    _expand_into(word, lk, out, quoted=False, split=split)
    return out.done()


def expand_string(word: str, lk: Lookup) -> str:
    """The word expanded as one string (assignments, `[[ ]]` operands, here-documents' lines)."""
    return " ".join(expand_word(word, lk, split=False)) if word else ""


def expand_heredoc(body: str, lk: Lookup) -> str:
    out = _Fields()
    _expand_into(body, lk, out, quoted=True, split=False, heredoc=True)
    return "".join(out.done())


def _expand_into(s: str, lk: Lookup, out: _Fields, quoted: bool, split: bool, heredoc: bool = False) -> None:
    i = 0
    add_expansion = out.lit if (quoted or not split) else out.splittable
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1] if i + 1 < len(s) else ""
            if quoted and nxt not in '$`"\\\n':
                out.lit("\\" + nxt)
            else:
                out.lit(nxt)
            i += 2
        elif c == "'" and not quoted and not heredoc:
            j = s.find("'", i + 1)
            j = len(s) if j < 0 else j
            out.lit(s[i + 1:j])
            i = j + 1
        elif c == '"' and not heredoc:
            if quoted:  # a closing quote seen from inside: cannot happen when called on whole words
                i += 1
                continue
            j = _dquote_end(s, i + 1)
            inner = _Fields()
            inner.started = True
            _expand_into(s[i + 1:j], lk, inner, quoted=True, split=False)
            fields = inner.done()
            out.many(fields, quoted=True) if len(fields) > 1 else out.lit(fields[0] if fields else "")
            i = j + 1
        elif c == "$" and s.startswith("$'", i) and not quoted:
            j = i + 2
            buf = ""
            while j < len(s) and s[j] != "'":
                if s[j] == "\\" and j + 1 < len(s):
                    buf += {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}.get(s[j + 1], s[j + 1])
                    j += 2
                    continue
                buf += s[j]
                j += 1
            out.lit(buf)
            i = j + 1
        elif c == "$" and s.startswith("$((", i):
            end = _match_brace(s, i + 3, "(", ")")
            if not s.startswith(")", end):
                raise Unknown("unbalanced")
            expr = s[i + 3:end - 1]
            try:
                add_expansion(str(arithmetic(expr, lk)))
            except Unknown as e:
                add_expansion(unknown(e.name))
            i = end + 1
        elif c == "$" and s.startswith("$(", i):
            end = _match_brace(s, i + 2, "(", ")")
            add_expansion(command_substitution(s[i + 2:end - 1], lk))
            i = end
        elif c == "`":
            j = s.find("`", i + 1)
            j = len(s) if j < 0 else j
            add_expansion(command_substitution(s[i + 1:j], lk))
            i = j + 1
        elif c == "$" and s.startswith("${", i):
            end = _match_brace(s, i + 2, "{", "}")
            body = s[i + 2:end - 1]
            value = _braced(body, lk)
            if isinstance(value, list):
                joined = body.endswith("[*]") or body == "*"
                if joined:
                    add_expansion(" ".join(value))
                else:
                    out.many(value, quoted=quoted or not split)
            else:
                add_expansion(value)
            i = end
        elif c == "$" and i + 1 < len(s) and (s[i + 1].isalpha() or s[i + 1] == "_"):
            m = _IDENT.match(s, i + 1)
            assert m
            add_expansion(_scalar(m.group(0), lk))
            i = m.end()
        elif c == "$" and i + 1 < len(s) and (s[i + 1].isdigit() or s[i + 1] in "@*#?$!-"):
            name = s[i + 1]
            value = _param(name, lk)
            if isinstance(value, list):
                out.many(value, quoted=quoted or not split) if name == "@" else add_expansion(" ".join(value))
            else:
                add_expansion(value)
            i += 2
        else:
            out.lit(c)
            i += 1


def _dquote_end(s: str, j: int) -> int:
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j
        if s.startswith("$(", j):
            j = _match_brace(s, j + 2, "(", ")")
            continue
        if s.startswith("${", j):
            j = _match_brace(s, j + 2, "{", "}")
            continue
        if c == "`":
            k = s.find("`", j + 1)
            j = len(s) if k < 0 else k + 1
            continue
        j += 1
    return len(s)


def _scalar(name: str, lk: Lookup) -> str:
    lk.used.add(name)
    sp = lk.special(name)
    if sp is not None:
        return sp
    v = lk.get(name)
    if v is None:
        arr = lk.get_array(name)
        if arr is not None:
            return arr[0] if arr else ""
        return unknown(name)
    return v


def _param(name: str, lk: Lookup) -> str | list[str]:
    if name.isdigit():
        pos = lk.positional()
        n = int(name)
        if n == 0:
            return lk.special("0") or unknown("0")
        return pos[n - 1] if n <= len(pos) else ""
    if name in "@*":
        return list(lk.positional())
    if name == "#":
        return str(len(lk.positional()))
    sp = lk.special(name)
    return sp if sp is not None else unknown(name)


def _value_of(ref: str, lk: Lookup) -> str | list[str] | None:
    """A parameter's value for `${...}`: None when unset."""
    m = re.fullmatch(r"([A-Za-z_]\w*)\[(.*)\]", ref)
    if m:
        name, sub = m.group(1), m.group(2)
        lk.used.add(name)
        sp = lk.special(name)
        if sp is not None and sub in ("0", "@", "*"):
            return sp if sub == "0" else [sp]
        arr = lk.get_array(name)
        if sub in ("@", "*"):
            if arr is None:
                v = lk.get(name)
                return None if v is None else [v]
            return list(arr)
        try:
            idx = arithmetic(sub, lk)
        except Unknown:
            return unknown(name)
        if arr is None:
            v = lk.get(name)
            return v if idx == 0 else None
        return arr[idx] if -len(arr) <= idx < len(arr) else None
    if ref.isdigit():
        v = _param(ref, lk)
        n = int(ref)
        return None if n > len(lk.positional()) and n != 0 else v
    if ref in ("@", "*", "#", "?", "$", "!", "-"):
        return _param(ref, lk)
    if not _IDENT.fullmatch(ref):
        raise Unknown(ref)
    lk.used.add(ref)
    sp = lk.special(ref)
    if sp is not None:
        return sp
    v = lk.get(ref)
    if v is None:
        arr = lk.get_array(ref)
        if arr is not None:
            return arr[0] if arr else ""
    return v


_OPS = re.compile(r"^(:-|:=|:\+|:\?|-|=|\+|\?|##|#|%%|%|//|/#|/%|/|:|\^\^|\^|,,|,|@)")


def _braced(body: str, lk: Lookup) -> str | list[str]:
    if body in ("#", "@", "*", "?", "$", "!", "-") or body.isdigit():
        return _param(body, lk)
    if body.startswith("#"):
        ref = body[1:]
        v = _value_of(ref, lk)
        if isinstance(v, list):
            # `${#A[@]}` of a variable whose whole value is unknown (an array read from input we cannot see)
            return unknown(ref.split("[")[0]) if len(v) == 1 and is_unknown(v[0]) and "[" in ref else str(len(v))
        if v is None:
            return "0"
        return unknown(ref) if is_unknown(v) else str(len(v))
    if body.startswith("!"):
        name = body[1:]
        target = _value_of(name, lk)
        if isinstance(target, str) and _IDENT.fullmatch(target):
            v = _value_of(target, lk)
            return v if v is not None else ""
        return unknown(name)
    m = re.match(r"([A-Za-z_]\w*(?:\[[^\]]*\])?|\d+|[@*#?$!-])", body)
    if not m:
        return unknown(body)
    ref, rest = m.group(1), body[m.end():]
    name = ref.split("[")[0]
    value = _value_of(ref, lk)
    if not rest:
        if value is None:
            return unknown(name)
        return value
    om = _OPS.match(rest)
    if not om:
        return unknown(name)
    op, arg = om.group(1), rest[om.end():]
    scalar = " ".join(value) if isinstance(value, list) else value
    unset = value is None
    empty = unset or scalar == ""
    if op in (":-", "-"):
        if (op == ":-" and empty) or (op == "-" and unset):
            return expand_string(arg, lk)
        return value  # type: ignore[return-value]
    if op in (":=", "="):
        if (op == ":=" and empty) or (op == "=" and unset):
            v = expand_string(arg, lk)
            lk.set(name, v)
            return v
        return value  # type: ignore[return-value]
    if op in (":+", "+"):
        if (op == ":+" and not empty) or (op == "+" and not unset):
            return expand_string(arg, lk)
        return ""
    if op in (":?", "?"):
        if empty:
            return unknown(name)  # the script would stop here with an error
        return value  # type: ignore[return-value]
    if unset:
        return unknown(name)
    if is_unknown(scalar or ""):
        return scalar  # type: ignore[return-value]
    s = scalar or ""
    if op in ("#", "##", "%", "%%"):
        pat = expand_string(arg, lk)
        return _trim(s, pat, op)
    if op in ("/", "//", "/#", "/%"):
        pat, _, rep = arg.partition("/")
        pat, rep = expand_string(pat, lk), expand_string(rep, lk)
        return _replace(s, pat, rep, op)
    if op == ":" and isinstance(value, list):
        # list slices: `${@:3}` (positional parameters from $3; $0 is index 0), `${ARR[@]:1:2}`
        off_s, _, len_s = arg.partition(":")
        try:
            off = arithmetic(off_s or "0", lk)
            items = list(value)
            if name in ("@", "*"):
                items = ["$0", *items]  # offsets count from $0
            if off < 0:
                off = max(0, len(items) + off)
            out = items[off:]
            if len_s:
                ln = arithmetic(len_s, lk)
                out = out[:ln] if ln >= 0 else out[:len(out) + ln]
            return [x for x in out if x != "$0"] if name in ("@", "*") else out
        except Unknown:
            return unknown(name)
    if op == ":":
        off_s, _, len_s = arg.partition(":")
        try:
            off = arithmetic(off_s or "0", lk)
            if off < 0:
                off = max(0, len(s) + off)
            if len_s:
                ln = arithmetic(len_s, lk)
                return s[off:off + ln] if ln >= 0 else s[off:len(s) + ln]
            return s[off:]
        except Unknown:
            return unknown(name)
    if op in ("^^", "^"):
        return s.upper() if op == "^^" else s[:1].upper() + s[1:]
    if op in (",,", ","):
        return s.lower() if op == ",," else s[:1].lower() + s[1:]
    return s


def _trim(s: str, pat: str, op: str) -> str:
    ranges = range(len(s) + 1)
    if op == "#":
        for k in ranges:
            if fnmatch.fnmatchcase(s[:k], pat):
                return s[k:]
    elif op == "##":
        for k in reversed(ranges):
            if fnmatch.fnmatchcase(s[:k], pat):
                return s[k:]
    elif op == "%":
        for k in reversed(ranges):
            if fnmatch.fnmatchcase(s[k:], pat):
                return s[:k]
    else:
        for k in ranges:
            if fnmatch.fnmatchcase(s[k:], pat):
                return s[:k]
    return s


def _replace(s: str, pat: str, rep: str, op: str) -> str:
    if not pat:
        return s
    if op == "/#":
        return rep + s[len(pat):] if s.startswith(pat) else s
    if op == "/%":
        return s[: -len(pat)] + rep if s.endswith(pat) else s
    if not any(ch in pat for ch in "*?["):
        return s.replace(pat, rep) if op == "//" else s.replace(pat, rep, 1)
    out, i, done = "", 0, False
    while i < len(s):
        if done and op == "/":
            out += s[i:]
            break
        for j in range(len(s), i, -1):
            if fnmatch.fnmatchcase(s[i:j], pat):
                out += rep
                i = j
                done = True
                break
        else:
            out += s[i]
            i += 1
    return out


# `$(cd "$(dirname "$0")" && pwd)`, `$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &> /dev/null && pwd -P)`
def command_substitution(code: str, lk: Lookup) -> str:
    """The value of `$(code)` when it follows from the script alone; otherwise unknown. Never runs it."""
    return substitute(code, lk, expand_string)


def arithmetic(text: str, lk: Lookup) -> int:
    """Evaluate `text` as bash arithmetic; raises Unknown when a name's value is not known."""
    expanded = expand_string(text, lk)  # $X and ${X} inside the expression expand first
    if is_unknown(expanded):
        raise Unknown(unknown_names(expanded)[0])
    return _Arith(expanded, lk).run()


__all__ = ["MARK", "ROOT", "Lookup", "Unknown", "anchored", "arithmetic", "command_substitution", "expand_heredoc",
           "expand_string", "expand_word", "is_unknown", "readable", "unknown", "unknown_names"]
