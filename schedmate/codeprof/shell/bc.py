"""`bc` arithmetic for `$(echo "EXPR" | bc)`, the idiom batch scripts use to compute step counts from a
token budget (`max_steps=$(echo "$tokens / ($seq * $bsz * $gpus)" | bc)`).

Only what follows exactly from bc's rules is evaluated: one expression over integer literals with
`+ - * / % ^` and parentheses, at bc's default scale 0 (`/` truncates towards zero, `^` is a power, evaluated
right to left, unary minus binds tighter than `^`). A decimal literal, `scale=`, `bc -l`, several statements,
variables or functions give None: the caller then leaves the value unknown rather than guess."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(?:(\d+)|([-+*/%^()]))")
_BC_PIPE = re.compile(r"^echo\s+(?:-[ne]+\s+)?(?P<expr>.+?)\s*\|\s*bc(?:\s+-q)?\s*$", re.S)


def bc_operand(code: str) -> str | None:
    """The `echo` operand of `echo EXPR | bc` (still to be expanded), or None for any other command."""
    m = _BC_PIPE.match(code.strip())
    return m.group("expr") if m else None


def bc_eval(text: str) -> int | None:
    """The value bc prints for one integer expression at scale 0, or None when bc's result is not certain
    from these rules (anything beyond integers and `+ - * / % ^ ( )`, division by zero, a negative power)."""
    toks: list[str] = []
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            return None if text[pos:].strip() else _finish(toks)
        toks.append(m.group(1) or m.group(2))
        pos = m.end()
    return _finish(toks)


def _finish(toks: list[str]) -> int | None:
    if not toks:
        return None
    p = _Parser(toks)
    try:
        v = p.sum()
    except (_Unsure, IndexError):
        return None
    return v if p.i == len(toks) else None


class _Unsure(Exception):
    pass


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise _Unsure
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class _Parser:
    def __init__(self, toks: list[str]) -> None:
        self.toks, self.i = toks, 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        t = self.toks[self.i]
        self.i += 1
        return t

    def sum(self) -> int:
        v = self.product()
        while self.peek() in ("+", "-"):
            v = v + self.product() if self.take() == "+" else v - self.product()
        return v

    def product(self) -> int:
        v = self.power()
        while self.peek() in ("*", "/", "%"):
            op, rhs = self.take(), self.power()
            if op == "*":
                v *= rhs
            else:
                q = _trunc_div(v, rhs)
                v = q if op == "/" else v - q * rhs
        return v

    def power(self) -> int:
        base = self.unary()
        if self.peek() != "^":
            return base
        self.take()
        exp = self.power()  # right associative
        if exp < 0 or exp > 64:
            raise _Unsure
        return base ** exp

    def unary(self) -> int:
        t = self.take()
        if t == "-":
            return -self.unary()
        if t == "(":
            v = self.sum()
            if self.take() != ")":
                raise _Unsure
            return v
        if t.isdigit():
            return int(t)
        raise _Unsure
