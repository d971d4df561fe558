"""Tokens of a POSIX/bash script, as bash would split them, with line numbers and here-documents.

Words keep their quoting (expansion happens later, in `expand`); operators are separate tokens;
`# comments` and backslash-newlines disappear; a here-document's body is attached to its `<<` token.
Nothing is executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPERATORS = ("&&", "||", ";;", ";&", "|&", ";", "&", "|", "(", ")")
REDIRECT = re.compile(r"^(\d*|&)(>>|>&|<&|<<<|<<-|<<|<>|>\||>|<)")
# after one of these tokens the next word is in command position (where `((` opens arithmetic)
_CMD_START = {None, "NEWLINE", ";", "&", "&&", "||", "|", "(", ";;", "then", "do", "else", "elif", "{", "!",
              "while", "until", "if"}


class ShellSyntaxError(ValueError):
    pass


@dataclass
class Token:
    kind: str
    """WORD, OP (text in `text`), NEWLINE, REDIR (operator in `text`), ARITH (expression in `text`)"""
    text: str
    line: int
    heredoc: str | None = None
    """for `<<` redirections: the body; `heredoc_quoted` says whether it expands"""
    heredoc_quoted: bool = False


class Lexer:
    def __init__(self, text: str, max_tokens: int = 200_000) -> None:
        self.s = text.replace("\r\n", "\n")
        self.i = 0
        self.line = 1
        self.out: list[Token] = []
        self.pending_heredocs: list[tuple[Token, str, bool]] = []
        self.max_tokens = max_tokens

    def _prev(self) -> str | None:
        if not self.out:
            return None
        t = self.out[-1]
        return "NEWLINE" if t.kind == "NEWLINE" else t.text if t.kind in ("OP", "WORD") else t.kind

    def tokens(self) -> list[Token]:
        s = self.s
        while self.i < len(s):
            if len(self.out) > self.max_tokens:
                raise ShellSyntaxError("script too long to read")
            c = s[self.i]
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
                self.line += 1
            elif c in " \t":
                self.i += 1
            elif c == "\n":
                self.out.append(Token("NEWLINE", "\n", self.line))
                self.i += 1
                self.line += 1
                self._read_heredocs()
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif s.startswith("((", self.i) and self._prev() in _CMD_START | {"for"}:
                self._arith()
            elif s.startswith(("<(", ">("), self.i):  # process substitution: a word naming a pipe
                start, line = self.i, self.line
                self._skip_parens(self.i + 2)
                self.out.append(Token("WORD", s[start:self.i], line))
            else:
                m = REDIRECT.match(s[self.i:self.i + 6])
                if m and (m.group(1) != "&" or m.group(2).startswith(">")):
                    self._redirect(m)
                    continue
                op = next((o for o in OPERATORS if s.startswith(o, self.i)), None)
                if op:
                    self.out.append(Token("OP", op, self.line))
                    self.i += len(op)
                else:
                    self._word()
        if self.pending_heredocs:
            self._read_heredocs()
        return self.out

    def _arith(self) -> None:
        start_line = self.line
        self.i += 2
        depth, j = 0, self.i
        s = self.s
        while j < len(s):
            if s[j] == "(":
                depth += 1
            elif s[j] == ")":
                if depth == 0 and s.startswith("))", j):
                    break
                depth -= 1
            elif s[j] == "\n":
                self.line += 1
            j += 1
        else:
            raise ShellSyntaxError(f"line {start_line}: unterminated (( ... ))")
        self.out.append(Token("ARITH", s[self.i:j], start_line))
        self.i = j + 2

    def _redirect(self, m: re.Match[str]) -> None:
        op = m.group(2)
        tok = Token("REDIR", m.group(0), self.line)
        self.i += len(m.group(0))
        self.out.append(tok)
        if op in ("<<", "<<-"):
            while self.i < len(self.s) and self.s[self.i] in " \t":
                self.i += 1
            start = self.i
            self._word()
            raw = self.out.pop().text if len(self.out) and self.out[-1].kind == "WORD" else ""
            quoted = any(q in raw for q in "'\"\\")
            delim = raw.replace("'", "").replace('"', "").replace("\\", "")
            if not delim:
                raise ShellSyntaxError(f"line {tok.line}: here-document without a delimiter")
            self.i = max(self.i, start)
            self.pending_heredocs.append((tok, delim, quoted))
            tok.heredoc_quoted = quoted
            tok.text = op  # the delimiter is not a redirection target

    def _read_heredocs(self) -> None:
        for tok, delim, _quoted in self.pending_heredocs:
            strip_tabs = tok.text == "<<-"
            body: list[str] = []
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i:end]
                self.i = end + 1
                self.line += 1
                check = line.lstrip("\t") if strip_tabs else line
                if check == delim:
                    break
                body.append(check)
            tok.heredoc = "\n".join(body) + ("\n" if body else "")
        self.pending_heredocs = []

    def _word(self) -> None:
        s = self.s
        start, line = self.i, self.line
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\n;&|()<>":
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    self.line += 1
                    continue
                self.i += 2
            elif c == "'":
                self._skip_until("'", self.i + 1)
            elif c == '"':
                self._skip_dquote(self.i + 1)
            elif c == "`":
                self._skip_until("`", self.i + 1, escapes=True)
            elif c == "$" and s.startswith("$'", self.i):
                self.i += 1
                self._skip_until("'", self.i + 1, escapes=True)
            elif c == "$" and s.startswith("$(", self.i):
                self._skip_parens(self.i + 2)
            elif c == "$" and s.startswith("${", self.i):
                self._skip_braces(self.i + 2)
            elif c in "@?*+!" and s.startswith("(", self.i + 1):
                self._skip_parens(self.i + 2)  # an extended glob, `@(a|b)`: one word, as bash reads it
            else:
                self.i += 1
        text = s[start:self.i].replace("\\\n", "")
        if text:
            self.out.append(Token("WORD", text, line))
        elif self.i == start:
            self.i += 1  # a lone metacharacter that is no operator: skip it

    def _skip_until(self, ch: str, j: int, escapes: bool = False) -> None:
        s = self.s
        while j < len(s) and s[j] != ch:
            if escapes and s[j] == "\\":
                j += 1
            elif s[j] == "\n":
                self.line += 1
            j += 1
        if j >= len(s):
            raise ShellSyntaxError(f"line {self.line}: unterminated {ch}")
        self.i = j + 1

    def _skip_dquote(self, j: int) -> None:
        s = self.s
        while j < len(s) and s[j] != '"':
            if s[j] == "\\":
                j += 1
            elif s.startswith("$(", j):
                self.i = j
                self._skip_parens(j + 2)
                j = self.i
                continue
            elif s.startswith("${", j):
                self.i = j
                self._skip_braces(j + 2)
                j = self.i
                continue
            elif s[j] == "`":
                self.i = j
                self._skip_until("`", j + 1, escapes=True)
                j = self.i
                continue
            if j < len(s) and s[j] == "\n":
                self.line += 1
            j += 1
        if j >= len(s):
            raise ShellSyntaxError(f"line {self.line}: unterminated double quote")
        self.i = j + 1

    def _skip_parens(self, j: int) -> None:
        self._skip_nested(j, "(", ")", "$(")

    def _skip_braces(self, j: int) -> None:
        self._skip_nested(j, "{", "}", "${")

    def _skip_nested(self, j: int, open_: str, close: str, what: str) -> None:
        """Skip to after the `close` that balances an already-open `open_` (quotes and escapes respected)."""
        s, depth = self.s, 1
        while j < len(s) and depth:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                self._skip_until("'", j + 1)
                j = self.i
                continue
            if c == '"':
                self._skip_dquote(j + 1)
                j = self.i
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
            elif c == "\n":
                self.line += 1
            j += 1
        if depth:
            raise ShellSyntaxError(f"line {self.line}: unterminated {what}")
        self.i = j


def tokenize(text: str) -> list[Token]:
    return Lexer(text).tokens()
