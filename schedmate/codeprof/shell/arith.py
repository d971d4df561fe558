"""Bash arithmetic (`$(( ))`, `(( ))`, `let`) over integers; an unset or unknown variable makes the result unknown."""

from __future__ import annotations

import re

from schedmate.codeprof.shell.values import (
    _IDENT,
    Lookup,
    Unknown,
    is_unknown,
    unknown_names,
)

_ARITH_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|([A-Za-z_]\w*)|(\+\+|--|\*\*|<<=|>>=|<<|>>|<=|>=|==|!="
                          r"|&&|\|\||[-+*/%&|^]=|[-+*/%<>=!~&|^?:(),]))")


_BINARY = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
    "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10, "**": 11,
}


class _Arith:
    def __init__(self, text: str, lk: Lookup) -> None:
        self.toks: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _ARITH_TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise Unknown("arith")
            pos = m.end()
            if m.group(1):
                self.toks.append(("num", m.group(1)))
            elif m.group(2):
                self.toks.append(("name", m.group(2)))
            else:
                self.toks.append(("op", m.group(3)))
        self.i = 0
        self.lk = lk

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def value_of(self, name: str) -> int:
        self.lk.used.add(name)
        v = self.lk.get(name)
        if v is None:
            raise Unknown(name)  # bash would use 0; here an unset name may come from the job's environment
        if v == "":
            return 0
        if is_unknown(v):
            raise Unknown(unknown_names(v)[0] if unknown_names(v) else name)
        v = v.strip()
        if re.fullmatch(r"[+-]?\d+", v):
            return int(v)
        if _IDENT.fullmatch(v):
            return self.value_of(v)
        raise Unknown(name)

    def run(self) -> int:
        if not self.toks:
            return 0
        v = self.expr()
        while self.peek() == ("op", ","):
            self.take()
            v = self.expr()
        if self.peek() is not None:
            raise Unknown("arith")
        return v

    def expr(self) -> int:
        # assignment (right associative)
        if (len(self.toks) > self.i + 1 and self.toks[self.i][0] == "name"
                and self.toks[self.i + 1][0] == "op" and self.toks[self.i + 1][1] in
                ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=")):
            name = self.take()[1]
            op = self.take()[1]
            rhs = self.expr()
            cur = self.value_of(name) if op != "=" else 0
            val = rhs if op == "=" else _apply(op[:-1], cur, rhs)
            self.lk.set(name, str(val))
            return val
        return self.ternary()

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.peek() == ("op", "?"):
            self.take()
            a = self.expr()
            if self.take() != ("op", ":"):
                raise Unknown("arith")
            b = self.expr()
            return a if cond else b
        return cond

    def binary(self, min_prec: int) -> int:
        left = self.unary()
        while (t := self.peek()) is not None and t[0] == "op" and _BINARY.get(t[1], 0) >= min_prec:
            op = self.take()[1]
            prec = _BINARY[op]
            right = self.binary(prec if op == "**" else prec + 1)
            left = _apply(op, left, right)
        return left

    def unary(self) -> int:
        t = self.peek()
        if t is None:
            raise Unknown("arith")
        if t[0] == "op" and t[1] in ("-", "+", "!", "~"):
            self.take()
            v = self.unary()
            return {"-": -v, "+": v, "!": int(not v), "~": ~v}[t[1]]
        if t[0] == "op" and t[1] in ("++", "--"):
            self.take()
            name = self.take()
            if name[0] != "name":
                raise Unknown("arith")
            v = self.value_of(name[1]) + (1 if t[1] == "++" else -1)
            self.lk.set(name[1], str(v))
            return v
        return self.postfix()

    def postfix(self) -> int:
        t = self.take()
        if t == ("op", "("):
            v = self.expr()
            if self.take() != ("op", ")"):
                raise Unknown("arith")
            return v
        if t[0] == "num":
            return int(t[1], 0) if t[1].lower().startswith("0x") else int(t[1])
        if t[0] == "name":
            v = self.value_of(t[1])
            nxt = self.peek()
            if nxt is not None and nxt[0] == "op" and nxt[1] in ("++", "--"):
                self.take()
                self.lk.set(t[1], str(v + (1 if nxt[1] == "++" else -1)))
            return v
        raise Unknown("arith")


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%") and b == 0:
        raise Unknown("division by zero")
    if op == "/":
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q  # bash truncates toward zero
    if op == "%":
        return a - b * _apply("/", a, b)
    if op == "**" and (b < 0 or b > 64):
        raise Unknown("arith")
    if op in ("<<", ">>") and not 0 <= b <= 64:
        raise Unknown("arith")
    return {
        "+": a + b, "-": a - b, "*": a * b, "**": a ** b if op == "**" else 0, "<<": a << b if op == "<<" else 0,
        ">>": a >> b if op == ">>" else 0, "<": int(a < b), "<=": int(a <= b), ">": int(a > b), ">=": int(a >= b),
        "==": int(a == b), "!=": int(a != b), "&": a & b, "|": a | b, "^": a ^ b, "&&": int(bool(a and b)),
        "||": int(bool(a or b)),
    }[op]
