"""Follow a job script the way bash would run it, without running anything.

The interpreter walks the syntax tree with variables, exports, arrays, positional parameters, functions,
`source`, `cd`, `shift`, `set --`, `eval`, here-documents and `#SBATCH` headers. Conditions it can decide
(`[ -z "$X" ]`, `[[ $N -gt 1 ]]`, `(( ... ))`, `case` on a known word) pick their branch; conditions it
cannot decide run every branch and join the results: a variable the branches set differently becomes
unknown. Every command that would start a program is recorded as an `Exec` (its expanded argv, the
exported environment, where it is, the lines of the variables it used), nested scripts (`bash x.sh`,
`sbatch x.sh`, `srun ... bash x.sh`) included. The launcher picks the training launch among them.

Bounded: loops run at most `MAX_LOOP` times, nesting is at most `MAX_DEPTH` deep, and the whole walk
stops after `MAX_STEPS` commands (a hostile script cannot make it spin).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Any

from schedmate.codeprof.shell.builtins import BuiltinsMixin
from schedmate.codeprof.shell.compound import CompoundMixin
from schedmate.codeprof.shell.conditions import names_unknown
from schedmate.codeprof.shell.expand import (
    ROOT,
    Lookup,
    Unknown,
    anchored,
    arithmetic,
    expand_heredoc,
    expand_string,
    expand_word,
    is_unknown,
    unknown,
)
from schedmate.codeprof.shell.lexer import ShellSyntaxError
from schedmate.codeprof.shell.parser import (
    AndOr,
    Arith,
    Case,
    For,
    FuncDef,
    Group,
    If,
    Pipeline,
    Seq,
    Simple,
    While,
    parse_script,
)
from schedmate.codeprof.shell.slurm_env import _options, _slurm_env
from schedmate.codeprof.shell.state import (
    _ASSIGN,
    _QUERY,
    _UTILITIES,
    BATCH_SUBMITTERS,
    MAX_STEPS,
    RUNNER_UTILITIES,
    Exec,
    FileAccess,
    ShellRun,
    Var,
    _Budget,
    _Exit,
    _State,
)
from schedmate.codeprof.shell.textutils import run_pipeline

# a placeholder a documented command leaves for the user (`--model <path to LLaVA-7B model>`, `--data <your_data>`):
# a single word to fill in, not an input and an output redirection
_PLACEHOLDER = re.compile(r"""(?<![\w<>&|])<([A-Za-z_][^<>\n'"|&;$`]*[^\s<>\n'"|&;$`])>(?=\s|$)""")


def _quote_placeholders(command: str) -> str:
    return _PLACEHOLDER.sub(lambda m: "'" + m.group(0) + "'", command)


class Interpreter(BuiltinsMixin, CompoundMixin):
    def __init__(self, files: FileAccess, env: dict[str, str] | None = None) -> None:
        self.files = files
        self.run = ShellRun()
        self.base_env = {k: Var(v, None, ("env:" + k,), True) for k, v in (env or {}).items()}

    # ---------------------------------------------------------------- entry points
    def command_line(self, command: str, cwd: str = "") -> ShellRun:
        """Interpret the submitted command line (itself shell) from `cwd`."""
        st = _State(dict(self.base_env), [], [], cwd, "cmd", 0)
        self._source_text(_quote_placeholders(command), "cmd", st)
        return self.run

    def script(self, rel: str, args: list[str], cwd: str = "", env: dict[str, str] | None = None) -> ShellRun:
        st = _State(dict(self.base_env), [], list(args), cwd, rel, 0, stack=[rel])
        for k, v in (env or {}).items():
            st.globals[k] = Var(v, None, ("env:" + k,), True)
        self._run_file(rel, st, sbatch_headers=True)
        return self.run

    # ---------------------------------------------------------------- files
    def _source_text(self, text: str, name: str, st: _State) -> None:
        try:
            tree = parse_script(text)
        except ShellSyntaxError as e:
            self.run.notes.append(f"{name}: not valid shell ({e}); not followed")
            return
        try:
            self._seq(tree, st)
        except _Exit:
            pass
        except _Budget:
            self.run.notes.append(f"{name}: stopped after {MAX_STEPS} commands (script too long or looping)")

    def _run_file(self, rel: str, st: _State, sbatch_headers: bool = False) -> bool:
        text = self.files.read(rel)
        if text is None:
            self.run.notes.append(f"{rel}: not readable in the workdir; not followed")
            return False
        if rel not in self.run.files:
            self.run.files.append(rel)
        if sbatch_headers:
            self._sbatch_headers(text, rel, st)
        old = st.script
        st.script = rel
        try:
            self._source_text(text, rel, st)
        finally:
            st.script = old
        return True

    def _sbatch_headers(self, text: str, rel: str, st: _State) -> None:
        """`#SBATCH` lines before the first command, as sbatch reads them; they set SLURM_* for the body."""
        for n, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if not s or (s.startswith("#") and not s.startswith("#SBATCH")):
                continue
            if not s.startswith("#SBATCH"):
                break
            try:
                words = shlex.split(s[len("#SBATCH"):], comments=True)
            except ValueError:
                continue
            for name, value in _options(words):
                st.sbatch.setdefault(name, (value, f"{rel}:{n}"))
        if st.sbatch:
            _slurm_env(st)

    # ---------------------------------------------------------------- lookup
    def _lookup(self, st: _State) -> Lookup:
        def get(name: str) -> str | None:
            v = st.find(name)
            if v is None:
                return None
            if v.value is None and v.array is not None:
                return v.array[0] if v.array else ""
            return v.value

        def get_array(name: str) -> list[str] | None:
            v = st.find(name)
            return None if v is None else v.array

        def set_(name: str, value: str) -> None:
            old = st.find(name)
            st.put(name, Var(value, None, (self._here(st),), bool(old and old.exported)))

        def special(name: str) -> str | None:
            if name in ("0", "BASH_SOURCE"):
                return f"{ROOT}/{st.script}" if st.script != "cmd" else "bash"
            if name == "PWD":
                return anchored(st.cwd)
            if name in ("?", "$", "!", "RANDOM", "SECONDS", "BASHPID", "PPID", "-"):
                return unknown(name)
            return None

        def read(path: str) -> str | None:
            rel = self.files.rel(path, st.cwd)
            return self.files.read(rel) if rel is not None and self.files.exists(rel) else None

        return Lookup(get, get_array, set_, lambda: st.positional, special, lambda: anchored(st.cwd), read=read)

    def _here(self, st: _State) -> str:
        return st.where(self._line)

    _line = 0

    def _expand(self, word: str, st: _State, split: bool = True) -> tuple[list[str], set[str]]:
        lk = self._lookup(st)
        try:
            fields = expand_word(word, lk, split=split)
        except Unknown as e:
            fields = [unknown(e.name)]
        return fields, lk.used

    def _evidence(self, used: set[str], st: _State) -> list[str]:
        out: list[str] = []
        for name in sorted(used):
            v = st.find(name)
            if v is not None:
                out.extend(w for w in v.where if w not in out)
        return out

    # ---------------------------------------------------------------- tree walk
    def _tick(self) -> None:
        self.run.steps += 1
        if self.run.steps > MAX_STEPS:
            raise _Budget()

    def _seq(self, seq: Seq, st: _State) -> bool | None:
        status: bool | None = True
        outer = st.background
        for k, item in enumerate(seq.items):
            st.background = outer or (k < len(seq.background) and seq.background[k])
            try:
                status = self._node(item, st)
            finally:
                st.background = outer
        return status

    def _node(self, node: Any, st: _State) -> bool | None:
        self._tick()
        if isinstance(node, Simple):
            self._line = node.line
            return self._simple(node, st)
        if isinstance(node, AndOr):
            return self._and_or(node, st)
        if isinstance(node, Pipeline):
            status = None
            for cmd in node.commands:
                status = self._node(cmd, st)
            return (None if status is None else not status) if node.negate else status
        if isinstance(node, If):
            return self._if(node, st)
        if isinstance(node, For):
            return self._for(node, st)
        if isinstance(node, While):
            return self._while(node, st)
        if isinstance(node, Case):
            return self._case(node, st)
        if isinstance(node, Group):
            if node.subshell:
                child = st.fork()
                try:
                    return self._seq(node.body, child)
                except _Exit:
                    return None
            return self._seq(node.body, st)
        if isinstance(node, FuncDef):
            st.funcs[node.name] = node.body
            return True
        if isinstance(node, Arith):
            self._line = node.line
            try:
                return arithmetic(node.expr, self._lookup(st)) != 0
            except Unknown:
                return None
        return None

    def _simple(self, node: Simple, st: _State) -> bool | None:
        words = node.words
        k = 0
        prefix_env: dict[str, tuple[str, set[str]]] = {}
        while k < len(words) and _ASSIGN.match(words[k]) and "=" in words[k]:
            k += 1
        if k == len(words):
            for w in words:
                self._assign(w, st, node.line)
            self._redirects(node, st, None)
            return True
        for w in words[:k]:
            m = _ASSIGN.match(w)
            assert m
            vals, used = self._expand(m.group(4), st, split=False)
            prefix_env[m.group(1)] = (" ".join(vals), used)
        argv: list[str] = []
        used: set[str] = set()
        if words[k] in ("[[",):
            return self._test(words[k + 1:-1], st, double=True)
        for w in words[k:]:
            fields, u = self._expand(w, st)
            argv.extend(fields)
            used |= u
        for _name, (_v, u) in prefix_env.items():
            used |= u
        if not argv:
            return True
        prog = posixpath.basename(argv[0])
        self._redirects(node, st, argv)
        builtin = self._builtin(prog, argv, st, node, prefix_env)
        if builtin is not NotImplemented:
            return builtin
        if prog in st.funcs:
            return self._call(st.funcs[prog], argv[1:], st)
        if prog in ("grep", "egrep"):  # a grep over the job's own files: its status is knowable
            got = run_pipeline(shlex.join(argv), self._lookup(st).read or (lambda _p: None))
            if got is not None:
                return got[1]
        if prog in _UTILITIES and not (prog in RUNNER_UTILITIES and argv[1:2] == ["run"]):
            return False if prog == "false" else (None if prog in _QUERY else True)
        stdin = next((r for r in node.redirects if r.op == "<" and r.target), None)
        if prog in BATCH_SUBMITTERS and stdin is not None and stdin.target is not None:  # `bsub < job.lsf`
            rel = self._script_path(" ".join(self._expand(stdin.target, st, split=False)[0]), st)
            if rel is not None:
                self._descend(rel, [], st, [], prefix_env, sbatch=False)
                return True
        nested = self._nested_script(argv, st)
        env = self._exported(st)
        env.update({k2: v for k2, (v, _) in prefix_env.items()})
        if nested is not None:
            rel, args, prefix = nested
            self._descend(rel, args, st, prefix, prefix_env, sbatch=prog == "sbatch")
            return True
        doc = next((r for r in node.redirects if r.heredoc is not None), None)
        if prog == "sbatch" and doc is not None:  # the batch script is a here-document on standard input
            try:
                text = doc.heredoc if doc.heredoc_quoted else expand_heredoc(doc.heredoc or "", self._lookup(st))
            except Unknown:
                text = doc.heredoc or ""
            self._descend(f"{st.script}:{node.line}<<sbatch", [], st, argv, prefix_env, sbatch=True, text=text or "")
            return True
        if prog == "sbatch":  # sbatch --wrap="..." or a script outside the workdir
            self._record(argv, env, node, used, st)
            return True
        self._record(argv, env, node, used, st)
        return None if prog in _QUERY else True

    def _record(self, argv: list[str], env: dict[str, str], node: Simple, used: set[str], st: _State) -> None:
        self.run.execs.append(Exec(
            argv=[*st.prefix, *argv], env=env, where=st.where(node.line), evidence=self._evidence(used, st),
            cwd=st.cwd, conditional=st.conditional > 0, script=st.script, depth=st.depth,
            prefix=list(st.prefix), sbatch=dict(st.sbatch), scripts=list(st.stack), background=st.background,
        ))

    def _exported(self, st: _State) -> dict[str, str]:
        out: dict[str, str] = {}
        for scope in [st.globals, *st.locals]:
            for k, v in scope.items():
                if v.exported:
                    out[k] = v.value if v.value is not None else (" ".join(v.array) if v.array else "")
        return out

    def _assign(self, word: str, st: _State, line: int, local: bool = False, export: bool = False) -> None:
        m = _ASSIGN.match(word)
        if not m:
            return
        name, sub, plus, raw = m.group(1), m.group(2), m.group(3), m.group(4)
        where = (st.where(line),)
        old = st.find(name)
        exported = export or bool(old and old.exported)
        if raw.startswith("(") and raw.endswith(")") and not sub:
            items: list[str] = []
            used: set[str] = set()
            try:
                inner = shlex.split(raw[1:-1], comments=True, posix=False)
            except ValueError:
                inner = raw[1:-1].split()
            for w in inner:
                f, u = self._expand(w, st)
                items.extend(f)
                used |= u
            if plus and old is not None:
                items = (old.array or ([old.value] if old.value else [])) + items
            st.put(name, Var(None, items, where + tuple(self._evidence(used, st)), exported), local)
            return
        vals, used = self._expand(raw, st, split=False)
        value = " ".join(vals)
        ev = where + tuple(w for w in self._evidence(used, st) if w not in where)
        if sub:
            arr = list(old.array) if old and old.array is not None else ([old.value] if old and old.value else [])
            try:
                idx = arithmetic(sub[1:-1], self._lookup(st))
            except Unknown:
                st.put(name, Var(unknown(name), None, ev, exported), local)
                return
            while len(arr) <= idx:
                arr.append("")
            arr[idx] = value
            st.put(name, Var(None, arr, ev, exported), local)
            return
        if plus and old is not None:
            value = (old.value or "") + value
        st.put(name, Var(value, None, ev, exported), local)

    def _redirects(self, node: Simple, st: _State, argv: list[str] | None) -> None:
        """`cat > file <<EOF` and `echo ... > file`: remember what the script writes (a config, a hostfile)."""
        target = next((r for r in node.redirects if r.op in (">", ">|") and r.target), None)
        if target is None or target.target is None:
            return
        path = " ".join(self._expand(target.target, st, split=False)[0])
        if is_unknown(path):
            return
        rel = self.files.rel(path, st.cwd)
        if rel is None:
            return
        doc = next((r for r in node.redirects if r.heredoc is not None), None)
        where = st.where(node.line)
        if doc is not None and (argv is None or posixpath.basename(argv[0]) == "cat"):
            lk = self._lookup(st)
            try:
                text = doc.heredoc if doc.heredoc_quoted else expand_heredoc(doc.heredoc or "", lk)
            except Unknown:
                text = doc.heredoc or ""
            self.run.virtual_files[rel] = (text or "", where)
        elif argv and posixpath.basename(argv[0]) in ("echo", "printf") and len(argv) > 1:
            self.run.virtual_files[rel] = (" ".join(a for a in argv[1:] if a not in ("-e", "-n")) + "\n", where)




__all__ = ["Exec", "FileAccess", "Interpreter", "ShellRun", "expand_string", "names_unknown"]
