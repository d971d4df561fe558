"""A syntax tree of a bash script: simple commands, pipelines, and/or lists, if/for/while/until/case,
brace groups, subshells, arithmetic commands and function definitions.

The grammar is bash's (a practical subset): enough for job scripts, which is where launch commands,
variables and `#SBATCH` headers live. Words stay unexpanded; `interp` expands them in scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from schedmate.codeprof.shell.lexer import ShellSyntaxError, Token, tokenize
from schedmate.codeprof.shell.patterns import split_alternatives

_ARRAY_ASSIGN = re.compile(r"[A-Za-z_]\w*\+?=")
RESERVED_END = {"then", "elif", "else", "fi", "do", "done", "esac", "}", "in"}


@dataclass
class Redirect:
    op: str
    target: str | None
    heredoc: str | None = None
    heredoc_quoted: bool = False


@dataclass
class Simple:
    words: list[str]
    line: int
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Arith:
    expr: str
    line: int


@dataclass
class Pipeline:
    commands: list[object]
    negate: bool = False


@dataclass
class AndOr:
    first: object
    rest: list[tuple[str, object]]


@dataclass
class Seq:
    items: list[object]
    background: list[bool] = field(default_factory=list)


@dataclass
class If:
    branches: list[tuple[Seq, Seq]]
    otherwise: Seq | None
    line: int


@dataclass
class For:
    var: str | None
    words: list[str] | None
    """None: iterate over "$@"; for C-style loops `arith` holds (init, cond, step)"""
    body: Seq
    line: int
    arith: tuple[str, str, str] | None = None


@dataclass
class While:
    cond: Seq
    body: Seq
    until: bool
    line: int


@dataclass
class Case:
    word: str
    arms: list[tuple[list[str], Seq]]
    line: int


@dataclass
class Group:
    body: Seq
    subshell: bool
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class FuncDef:
    name: str
    body: object
    line: int


class Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.t = tokens
        self.i = 0

    # -- helpers --------------------------------------------------------------------------
    def peek(self) -> Token | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def word_is(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "WORD" and tok.text == text

    def op_is(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "OP" and tok.text == text

    def skip_newlines(self) -> None:
        while (tok := self.peek()) is not None and (tok.kind == "NEWLINE" or (tok.kind == "OP" and tok.text == ";")):
            self.i += 1

    def expect_word(self, text: str) -> None:
        self.skip_newlines()
        if not self.word_is(text):
            tok = self.peek()
            where = f"line {tok.line}" if tok else "end of script"
            raise ShellSyntaxError(f"{where}: expected `{text}`")
        self.i += 1

    def line(self) -> int:
        tok = self.peek()
        return tok.line if tok else (self.t[-1].line if self.t else 1)

    # -- grammar ----------------------------------------------------------------------------
    def parse(self) -> Seq:
        seq = self.seq(stop=set())
        if self.peek() is not None:
            tok = self.peek()
            raise ShellSyntaxError(f"line {tok.line}: unexpected `{tok.text}`")  # type: ignore[union-attr]
        return seq

    def seq(self, stop: set[str]) -> Seq:
        out = Seq([])
        while True:
            self.skip_newlines()
            tok = self.peek()
            if tok is None:
                return out
            if tok.kind == "WORD" and tok.text in stop:
                return out
            if tok.kind == "OP" and tok.text in (")", ";;", ";&"):
                return out
            item = self.and_or()
            if item is None:
                return out
            bg = self.op_is("&")
            if bg:
                self.i += 1
            out.items.append(item)
            out.background.append(bg)

    def and_or(self) -> object | None:
        first = self.pipeline()
        if first is None:
            return None
        rest: list[tuple[str, object]] = []
        while (tok := self.peek()) is not None and tok.kind == "OP" and tok.text in ("&&", "||"):
            self.i += 1
            while (n := self.peek()) is not None and n.kind == "NEWLINE":
                self.i += 1
            nxt = self.pipeline()
            if nxt is None:
                raise ShellSyntaxError(f"line {tok.line}: `{tok.text}` without a command after it")
            rest.append((tok.text, nxt))
        return AndOr(first, rest) if rest else first

    def pipeline(self) -> object | None:
        negate = False
        if self.word_is("!"):
            negate = True
            self.i += 1
        cmd = self.command()
        if cmd is None:
            return None
        cmds = [cmd]
        while (tok := self.peek()) is not None and tok.kind == "OP" and tok.text in ("|", "|&"):
            self.i += 1
            while (n := self.peek()) is not None and n.kind == "NEWLINE":
                self.i += 1
            nxt = self.command()
            if nxt is None:
                raise ShellSyntaxError(f"line {tok.line}: `|` without a command after it")
            cmds.append(nxt)
        return Pipeline(cmds, negate) if len(cmds) > 1 or negate else cmd

    def command(self) -> object | None:
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind == "ARITH":
            self.i += 1
            return Arith(tok.text, tok.line)
        if tok.kind == "OP" and tok.text == "(":
            self.i += 1
            body = self.seq(stop=set())
            if not self.op_is(")"):
                raise ShellSyntaxError(f"line {tok.line}: `(` without `)`")
            self.i += 1
            return Group(body, True, self.redirects())
        if tok.kind != "WORD" and tok.kind != "REDIR":
            return None
        if tok.kind == "WORD":
            w = tok.text
            if w in RESERVED_END:
                return None
            if w == "if":
                return self.if_()
            if w in ("while", "until"):
                return self.while_(w == "until")
            if w == "for":
                return self.for_()
            if w == "case":
                return self.case_()
            if w == "{":
                self.i += 1
                body = self.seq(stop={"}"})
                self.expect_word("}")
                return Group(body, False, self.redirects())
            if w == "function":
                self.i += 1
                name = self.peek()
                if name is None or name.kind != "WORD":
                    raise ShellSyntaxError(f"line {tok.line}: `function` without a name")
                self.i += 1
                if self.op_is("(") and self._next_is_close():
                    self.i += 2
                self.skip_newlines()
                return FuncDef(name.text.rstrip("()"), self.command(), tok.line)
            if self._next_is_open() and self._after_open_is_close():
                self.i += 3
                self.skip_newlines()
                return FuncDef(w, self.command(), tok.line)
        return self.simple()

    def _next_is_open(self) -> bool:
        n = self.t[self.i + 1] if self.i + 1 < len(self.t) else None
        return n is not None and n.kind == "OP" and n.text == "("

    def _after_open_is_close(self) -> bool:
        n = self.t[self.i + 2] if self.i + 2 < len(self.t) else None
        return n is not None and n.kind == "OP" and n.text == ")"

    def _next_is_close(self) -> bool:
        n = self.t[self.i + 1] if self.i + 1 < len(self.t) else None
        return n is not None and n.kind == "OP" and n.text == ")"

    def redirects(self) -> list[Redirect]:
        out: list[Redirect] = []
        while (tok := self.peek()) is not None and tok.kind == "REDIR":
            self.i += 1
            if tok.heredoc is not None or tok.text in ("<<", "<<-"):
                out.append(Redirect(tok.text, None, tok.heredoc or "", tok.heredoc_quoted))
                continue
            tgt = self.peek()
            if tgt is None or tgt.kind != "WORD":
                raise ShellSyntaxError(f"line {tok.line}: redirection `{tok.text}` without a target")
            self.i += 1
            out.append(Redirect(tok.text, tgt.text))
        return out

    def simple(self) -> Simple | None:
        tok = self.peek()
        assert tok is not None
        cmd = Simple([], tok.line)
        if tok.kind == "WORD" and tok.text == "[[":
            # [[ ... ]] keeps && || < > inside as words
            while (t := self.peek()) is not None and not (t.kind == "WORD" and t.text == "]]"):
                if t.kind == "NEWLINE":
                    raise ShellSyntaxError(f"line {tok.line}: `[[` without `]]`")
                cmd.words.append(t.text if t.kind != "REDIR" else t.text)
                self.i += 1
            if self.peek() is None:
                raise ShellSyntaxError(f"line {tok.line}: `[[` without `]]`")
            cmd.words.append("]]")
            self.i += 1
            return cmd
        while (t := self.peek()) is not None:
            if t.kind == "WORD":
                # `A=(x y z)`: an array assignment spans the parenthesised words
                if _ARRAY_ASSIGN.fullmatch(t.text) and self._next_is_open():
                    self.i += 2
                    items: list[str] = []
                    while (x := self.peek()) is not None and not (x.kind == "OP" and x.text == ")"):
                        if x.kind == "WORD":
                            items.append(x.text)
                        self.i += 1
                    if self.peek() is None:
                        raise ShellSyntaxError(f"line {t.line}: array assignment without `)`")
                    self.i += 1
                    cmd.words.append(t.text + "(" + " ".join(items) + ")")
                    continue
                cmd.words.append(t.text)
                self.i += 1
            elif t.kind == "REDIR":
                cmd.redirects.extend(self.redirects())
            else:
                break
        return cmd if cmd.words or cmd.redirects else None

    def if_(self) -> If:
        line = self.line()
        self.i += 1
        branches: list[tuple[Seq, Seq]] = []
        cond = self.seq(stop={"then"})
        self.expect_word("then")
        body = self.seq(stop={"elif", "else", "fi"})
        branches.append((cond, body))
        otherwise = None
        while True:
            self.skip_newlines()
            if self.word_is("elif"):
                self.i += 1
                c = self.seq(stop={"then"})
                self.expect_word("then")
                branches.append((c, self.seq(stop={"elif", "else", "fi"})))
            elif self.word_is("else"):
                self.i += 1
                otherwise = self.seq(stop={"fi"})
            else:
                break
        self.expect_word("fi")
        self.redirects()
        return If(branches, otherwise, line)

    def while_(self, until: bool) -> While:
        line = self.line()
        self.i += 1
        cond = self.seq(stop={"do"})
        self.expect_word("do")
        body = self.seq(stop={"done"})
        self.expect_word("done")
        self.redirects()
        return While(cond, body, until, line)

    def for_(self) -> For:
        line = self.line()
        self.i += 1
        tok = self.peek()
        if tok is not None and tok.kind == "ARITH":
            self.i += 1
            parts = (tok.text.split(";") + ["", "", ""])[:3]
            self.skip_newlines()
            self.expect_word("do")
            body = self.seq(stop={"done"})
            self.expect_word("done")
            return For(None, None, body, line, arith=(parts[0], parts[1], parts[2]))
        if tok is None or tok.kind != "WORD":
            raise ShellSyntaxError(f"line {line}: `for` without a variable")
        var = tok.text
        self.i += 1
        words: list[str] | None = None
        while (n := self.peek()) is not None and n.kind == "NEWLINE":
            self.i += 1
        if self.word_is("in"):
            self.i += 1
            words = []
            while (t := self.peek()) is not None and t.kind == "WORD":
                words.append(t.text)
                self.i += 1
        self.skip_newlines()
        self.expect_word("do")
        body = self.seq(stop={"done"})
        self.expect_word("done")
        self.redirects()
        return For(var, words, body, line)

    def case_(self) -> Case:
        line = self.line()
        self.i += 1
        word = self.peek()
        if word is None or word.kind != "WORD":
            raise ShellSyntaxError(f"line {line}: `case` without a word")
        self.i += 1
        self.expect_word("in")
        arms: list[tuple[list[str], Seq]] = []
        while True:
            self.skip_newlines()
            if self.word_is("esac"):
                self.i += 1
                break
            if self.peek() is None:
                raise ShellSyntaxError(f"line {line}: `case` without `esac`")
            if self.op_is("("):
                self.i += 1
            pats: list[str] = []
            while (t := self.peek()) is not None and not (t.kind == "OP" and t.text == ")"):
                if t.kind == "WORD":
                    pats.extend(p for p in split_alternatives(t.text) if p)  # `|` inside `@(a|b)` does not split
                elif not (t.kind == "OP" and t.text == "|"):
                    raise ShellSyntaxError(f"line {t.line}: bad case pattern")
                self.i += 1
            if self.peek() is None:
                raise ShellSyntaxError(f"line {line}: case pattern without `)`")
            self.i += 1
            body = self.seq(stop={"esac"})
            arms.append((pats, body))
            if self.op_is(";;") or self.op_is(";&"):
                self.i += 1
        self.redirects()
        return Case(word.text, arms, line)


def parse_script(text: str) -> Seq:
    """The syntax tree of `text`; raises ShellSyntaxError with a line number on malformed input."""
    return Parser(tokenize(text)).parse()
