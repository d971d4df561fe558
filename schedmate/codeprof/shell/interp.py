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

import fnmatch
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

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
    unknown_names,
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

MAX_LOOP = 64
MAX_DEPTH = 10
MAX_STEPS = 20_000
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)(\[[^\]]*\])?(\+?)=(.*)$", re.DOTALL)
# programs whose exit status says something the script could test but we cannot know
_QUERY = {"command", "which", "type", "hash", "grep", "egrep", "pgrep", "nvidia-smi", "ps", "ls", "test-gpu",
          "python", "python3", "curl", "ping", "nc", "getent", "id", "whoami", "compgen", "diff", "cmp"}
# programs that only touch files, print or set up the environment: nothing to record
_UTILITIES = {
    "echo", "printf", "mkdir", "rm", "cp", "mv", "ln", "touch", "cat", "tee", "chmod", "chown", "sleep", "wait",
    "date", "hostname", "sync", "true", ":", "false", "trap", "ulimit", "umask", "module", "ml", "conda", "mamba",
    "pip", "pip3", "git", "wget", "curl", "tar", "unzip", "gzip", "head", "tail", "sort", "uniq", "wc", "sed",
    "awk", "cut", "tr", "find", "xargs", "rsync", "scp", "ssh-keygen", "nvidia-smi", "nvcc", "df", "du", "free",
    "env_setup", "activate", "deactivate", "pushd", "popd", "alias", "unalias", "history", "clear", "logger",
    "sacct", "squeue", "scontrol", "sinfo", "scancel", "jq", "yq", "test", "[", "[[", "let", "wandb", "huggingface-cli",
    "ssh", "kill", "pkill", "killall", "ifconfig", "ip", "lscpu", "lspci", "nproc", "uname", "whoami", "id",
    "getopts", "read", "mapfile", "readarray", "shopt", "set", "hash", "type", "which", "command", "builtin",
}
_WRAPPERS = {"srun", "mpirun", "mpiexec", "horovodrun", "nohup", "time", "exec", "env", "numactl", "taskset",
             "timeout", "stdbuf", "nice", "ionice", "unbuffer", "singularity", "apptainer", "xvfb-run", "chrt"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
_SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".job", ".run")


class _Exit(Exception):
    pass


class _Return(Exception):
    pass


class _Break(Exception):
    def __init__(self, levels: int = 1, cont: bool = False) -> None:
        super().__init__()
        self.levels, self.cont = levels, cont


class _Budget(Exception):
    pass


@dataclass
class Var:
    value: str | None = None
    array: list[str] | None = None
    where: tuple[str, ...] = ()
    exported: bool = False


@dataclass
class Exec:
    """A program the script would start."""

    argv: list[str]
    """expanded words; unknown pieces carry `expand.MARK` (see `expand.unknown_names`)"""
    env: dict[str, str]
    """the exported environment the program would see (unknown values marked)"""
    where: str
    """file:line of the command"""
    evidence: list[str]
    """file:line of the assignments of the variables its words used"""
    cwd: str
    """workdir-relative directory it runs in"""
    conditional: bool
    """inside a branch or loop whose condition could not be decided"""
    script: str
    """workdir-relative script it is in (`cmd` for the submitted command line)"""
    depth: int
    prefix: list[str] = field(default_factory=list)
    """wrapper words around a nested script (`srun -N 2`) that apply to this command"""
    sbatch: dict[str, tuple[str, str]] = field(default_factory=dict)
    """#SBATCH / sbatch options in force: name -> (value, file:line)"""
    scripts: list[str] = field(default_factory=list)
    """the scripts run to get here, outermost first (`bash run.sh` -> `srun bash inner.sh`)"""


@dataclass
class ShellRun:
    execs: list[Exec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """workdir-relative scripts and sourced files read"""
    virtual_files: dict[str, tuple[str, str]] = field(default_factory=dict)
    """workdir-relative path -> (text, file:line) for files the script writes (`cat > x <<EOF`)"""
    steps: int = 0


class FileAccess:
    """What the interpreter may read: workdir-relative text files (the analyzer's bounded reader)."""

    def read(self, rel: str) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def exists(self, rel: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def is_dir(self, rel: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def rel(self, path: str, base: str) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class _State:
    globals: dict[str, Var]
    locals: list[dict[str, Var]]
    positional: list[str]
    cwd: str
    script: str
    depth: int
    conditional: int = 0
    prefix: list[str] = field(default_factory=list)
    sbatch: dict[str, tuple[str, str]] = field(default_factory=dict)
    funcs: dict[str, Any] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)

    def fork(self) -> _State:
        """A copy whose assignments do not reach this state (Vars are replaced, never changed in place)."""
        return _State(dict(self.globals), [dict(s) for s in self.locals], list(self.positional), self.cwd,
                      self.script, self.depth, self.conditional, list(self.prefix), dict(self.sbatch),
                      dict(self.funcs), list(self.stack))

    def where(self, line: int) -> str:
        return "cmd" if self.script == "cmd" else f"{self.script}:{line}"

    def find(self, name: str) -> Var | None:
        for scope in reversed(self.locals):
            if name in scope:
                return scope[name]
        return self.globals.get(name)

    def put(self, name: str, var: Var, local: bool = False) -> None:
        if local and self.locals:
            self.locals[-1][name] = var
            return
        for scope in reversed(self.locals):
            if name in scope:
                scope[name] = var
                return
        self.globals[name] = var


class Interpreter:
    def __init__(self, files: FileAccess, env: dict[str, str] | None = None) -> None:
        self.files = files
        self.run = ShellRun()
        self.base_env = {k: Var(v, None, ("env:" + k,), True) for k, v in (env or {}).items()}

    # ---------------------------------------------------------------- entry points
    def command_line(self, command: str, cwd: str = "") -> ShellRun:
        """Interpret the submitted command line (itself shell) from `cwd`."""
        st = _State(dict(self.base_env), [], [], cwd, "cmd", 0)
        self._source_text(command, "cmd", st)
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

        return Lookup(get, get_array, set_, lambda: st.positional, special, lambda: anchored(st.cwd))

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
        for item in seq.items:
            status = self._node(item, st)
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

    def _and_or(self, node: AndOr, st: _State) -> bool | None:
        status = self._node(node.first, st)
        for op, nxt in node.rest:
            run = status if op == "&&" else (None if status is None else not status)
            if run is True:
                status = self._node(nxt, st)
            elif run is None:
                status = self._branches(st, [lambda s, n=nxt: self._node(n, s), lambda s: None])
        return status

    # -- joins --------------------------------------------------------------------------------
    def _branches(self, st: _State, bodies: list[Any]) -> bool | None:
        """Run each body on a copy of the state; join: equal values stay, different ones become unknown."""
        results: list[_State] = []
        for body in bodies:
            child = st.fork()
            child.conditional += 1
            try:
                body(child)
            except _Exit:
                continue
            except _Return:
                results.append(child)
                continue
            child.conditional -= 1
            results.append(child)
        if not results:
            raise _Exit()
        _join_into(st, results)
        return None

    def _if(self, node: If, st: _State) -> bool | None:
        for k, (cond, body) in enumerate(node.branches):
            c = self._seq(cond, st)
            if c is True:
                return self._seq(body, st)
            if c is None:
                rest_branches = node.branches[k + 1:]
                alt = If(rest_branches, node.otherwise, node.line) if rest_branches else node.otherwise
                return self._branches(st, [
                    lambda s, b=body: self._seq(b, s),
                    (lambda s, a=alt: self._node(a, s) if isinstance(a, If) else self._seq(a, s)) if alt else
                    (lambda s: None),
                ])
        if node.otherwise is not None:
            return self._seq(node.otherwise, st)
        return True

    def _for(self, node: For, st: _State) -> bool | None:
        if node.arith is not None:
            lk = self._lookup(st)
            init, cond, step = node.arith
            try:
                if init.strip():
                    arithmetic(init, lk)
                for _ in range(MAX_LOOP):
                    if cond.strip() and arithmetic(cond, self._lookup(st)) == 0:
                        return True
                    if self._loop_body(node.body, st):
                        return True
                    if step.strip():
                        arithmetic(step, self._lookup(st))
            except Unknown:
                return self._branches(st, [lambda s: self._loop_body(node.body, s), lambda s: None])
            self.run.notes.append(f"{st.script}:{node.line}: loop stopped after {MAX_LOOP} rounds")
            return None
        if node.words is None:
            items = list(st.positional)
        else:
            items = []
            for w in node.words:
                items.extend(self._expand(w, st)[0])
        if len(items) > MAX_LOOP:
            self.run.notes.append(f"{st.script}:{node.line}: loop over {len(items)} items cut to {MAX_LOOP}")
            items = items[:MAX_LOOP]
        for k, it in enumerate(items):
            st.put(node.var or "_", Var(it, None, (st.where(node.line),)))
            if k:
                st.conditional += 1  # later rounds repeat the first one's launches
            try:
                stop = self._loop_body(node.body, st)
            finally:
                if k:
                    st.conditional -= 1
            if stop:
                break
        return True

    def _loop_body(self, body: Seq, st: _State) -> bool:
        """Run one round; True when the loop should stop (break)."""
        try:
            self._seq(body, st)
        except _Break as b:
            return not b.cont
        return False

    def _while(self, node: While, st: _State) -> bool | None:
        for _ in range(MAX_LOOP):
            c = self._seq(node.cond, st)
            if c is not None and node.until:
                c = not c
            if c is False:
                return True
            if c is None:
                return self._branches(st, [lambda s: self._loop_body(node.body, s), lambda s: None])
            if self._loop_body(node.body, st):
                return True
        self.run.notes.append(f"{st.script}:{node.line}: loop stopped after {MAX_LOOP} rounds")
        return None

    def _case(self, node: Case, st: _State) -> bool | None:
        self._line = node.line
        word = " ".join(self._expand(node.word, st, split=False)[0])
        if is_unknown(word):
            return self._branches(st, [lambda s, b=body: self._seq(b, s) for _, body in node.arms] + [lambda s: None])
        for pats, body in node.arms:
            for p in pats:
                pat = " ".join(self._expand(p, st, split=False)[0]) if any(c in p for c in "$\"'") else p
                if is_unknown(pat):
                    return self._branches(st, [lambda s, b=body: self._seq(b, s), lambda s: None])
                if fnmatch.fnmatchcase(word, pat):
                    return self._seq(body, st)
        return True

    # ---------------------------------------------------------------- simple commands
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
        if prog in _UTILITIES:
            return False if prog == "false" else (None if prog in _QUERY else True)
        nested = self._nested_script(argv, st)
        env = self._exported(st)
        env.update({k2: v for k2, (v, _) in prefix_env.items()})
        if nested is not None:
            rel, args, prefix = nested
            self._descend(rel, args, st, prefix, prefix_env, sbatch=prog == "sbatch")
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
            prefix=list(st.prefix), sbatch=dict(st.sbatch), scripts=list(st.stack),
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

    # -- builtins ---------------------------------------------------------------------------------
    def _builtin(self, prog: str, argv: list[str], st: _State, node: Simple,
                 prefix_env: dict[str, tuple[str, set[str]]]) -> Any:
        if prog in ("export", "declare", "typeset", "local", "readonly"):
            export = prog == "export" or any(a.startswith("-") and "x" in a for a in argv[1:])
            local = prog == "local" or (prog in ("declare", "typeset") and bool(st.locals))
            for raw in node.words[1:]:
                if raw.startswith("-"):
                    continue
                if _ASSIGN.match(raw):
                    self._assign(raw, st, node.line, local=local, export=export)
                elif export:
                    for n in self._expand(raw, st)[0]:
                        old = st.find(n)
                        if old is not None and not old.exported:
                            st.put(n, Var(old.value, old.array, old.where, True))
            return True
        if prog == "unset":
            for n in argv[1:]:
                if not n.startswith("-"):
                    st.put(n, Var(None, None, (st.where(node.line),)))
                    for scope in [st.globals, *st.locals]:
                        scope.pop(n, None)
            return True
        if prog in ("source", "."):
            if len(argv) < 2:
                return True
            rel = self._script_path(argv[1], st)
            if rel is None:
                self.run.notes.append(f"{st.script}:{node.line}: sourced file {argv[1]} is not in the workdir")
                return None
            if st.depth >= MAX_DEPTH:
                return None
            old_pos = st.positional
            if len(argv) > 2:
                st.positional = argv[2:]
            st.depth += 1
            try:
                self._run_file(rel, st)
            finally:
                st.depth -= 1
                st.positional = old_pos
            return True
        if prog == "cd":
            target = argv[1] if len(argv) > 1 else ""
            if not target or is_unknown(target) or target == "-":
                return True
            rel = self.files.rel(target, st.cwd)
            if rel is None:
                self.run.notes.append(f"{st.script}:{node.line}: cd {target} leaves the workdir")
                return True
            st.cwd = "" if rel == "." else rel
            return True
        if prog == "shift":
            n = 1
            if len(argv) > 1 and argv[1].isdigit():
                n = int(argv[1])
            st.positional = st.positional[n:]
            return True
        if prog == "set":
            if "--" in argv:
                st.positional = argv[argv.index("--") + 1:]
            return True
        if prog == "eval":
            self._source_text(" ".join(argv[1:]), f"{st.script}:{node.line}(eval)", st)
            return True
        if prog in ("exit",):
            raise _Exit()
        if prog == "return":
            raise _Return()
        if prog in ("break", "continue"):
            raise _Break(cont=prog == "continue")
        if prog in ("read", "getopts", "mapfile", "readarray"):
            for n in argv[1:]:
                if re.fullmatch(r"[A-Za-z_]\w*", n):
                    st.put(n, Var(unknown(n), None, (st.where(node.line),)))
            return None
        if prog in ("test", "["):
            words = argv[1:-1] if prog == "[" and argv[-1:] == ["]"] else argv[1:]
            return self._test_values(words, st, double=False)
        if prog == "let":
            try:
                for a in argv[1:]:
                    v = arithmetic(a, self._lookup(st))
                return v != 0
            except Unknown:
                return None
        if prog in ("true", ":"):
            return True
        if prog == "false":
            return False
        return NotImplemented

    def _call(self, body: Any, args: list[str], st: _State) -> bool | None:
        if st.depth >= MAX_DEPTH:
            self.run.notes.append(f"{st.script}: functions nest deeper than {MAX_DEPTH}; not followed")
            return None
        old = st.positional
        st.positional = list(args)
        st.locals.append({})
        st.depth += 1
        try:
            return self._node(body, st)
        except _Return:
            return True
        finally:
            st.depth -= 1
            st.locals.pop()
            st.positional = old

    # -- nested scripts ---------------------------------------------------------------------------
    def _script_path(self, path: str, st: _State) -> str | None:
        if is_unknown(path):
            return None
        for base in (st.cwd, posixpath.dirname(st.script) if st.script != "cmd" else st.cwd, ""):
            rel = self.files.rel(path, base)
            if rel is not None and self.files.exists(rel):
                return rel
        return None

    def _nested_script(self, argv: list[str], st: _State) -> tuple[str, list[str], list[str]] | None:
        """(script, its args, wrapper words before it) when the command runs a shell script of the workdir."""
        prog = posixpath.basename(argv[0])
        if prog in _SHELLS:
            k = 1
            while k < len(argv) and argv[k].startswith("-") and argv[k] != "-c":
                k += 1
            if k < len(argv) and argv[k] == "-c":
                return None
            if k < len(argv):
                rel = self._script_path(argv[k], st)
                if rel is not None:
                    return rel, argv[k + 1:], []
            return None
        if prog == "sbatch":
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                attached = "=" in argv[k] or (not argv[k].startswith("--") and len(argv[k]) > 2)
                k += 1 if attached or argv[k] in _SBATCH_FLAGS else 2
            if k < len(argv):
                rel = self._script_path(argv[k], st)
                if rel is not None:
                    return rel, argv[k + 1:], argv[:k]
            return None
        if argv[0].endswith(_SCRIPT_SUFFIXES):
            rel = self._script_path(argv[0], st)
            if rel is not None:
                return rel, argv[1:], []
        if prog in _WRAPPERS:
            for k in range(1, len(argv)):
                tok = argv[k]
                if posixpath.basename(tok) in _SHELLS and k + 1 < len(argv):
                    rel = self._script_path(argv[k + 1], st)
                    if rel is not None:
                        return rel, argv[k + 2:], argv[:k]
                if tok.endswith(_SCRIPT_SUFFIXES):
                    rel = self._script_path(tok, st)
                    if rel is not None:
                        return rel, argv[k + 1:], argv[:k]
        return None

    def _descend(self, rel: str, args: list[str], st: _State, prefix: list[str],
                 prefix_env: dict[str, tuple[str, set[str]]], sbatch: bool) -> None:
        if st.depth >= MAX_DEPTH:
            self.run.notes.append(f"{rel}: scripts nest deeper than {MAX_DEPTH}; not followed")
            return
        child = _State({}, [], list(args), st.cwd, rel, st.depth + 1, st.conditional,
                       [*st.prefix, *([] if sbatch else prefix)], dict(st.sbatch), stack=[*st.stack, rel])
        for scope in [st.globals, *st.locals]:
            for k, v in scope.items():
                if v.exported:
                    child.globals[k] = v
        for k, (v, _u) in prefix_env.items():
            child.globals[k] = Var(v, None, (st.where(self._line),), True)
        if sbatch:
            for name, value in _options(prefix[1:]):
                child.sbatch[name] = (value, st.where(self._line))
        if sbatch and child.sbatch:
            _slurm_env(child)
        self._run_file(rel, child, sbatch_headers=True)

    # -- conditions -------------------------------------------------------------------------------
    def _test(self, raw_words: list[str], st: _State, double: bool) -> bool | None:
        words: list[str] = []
        for w in raw_words:
            if w in ("&&", "||", "(", ")", "!", "<", ">"):
                words.append(w)
                continue
            fields, _ = self._expand(w, st, split=False)
            words.append(" ".join(fields) if fields else "")
        return self._test_values(words, st, double)

    def _test_values(self, words: list[str], st: _State, double: bool) -> bool | None:
        try:
            return _TestExpr(words, self, st, double).run()
        except (IndexError, ValueError):
            return None


_SBATCH_FLAGS = {"--exclusive", "--requeue", "--no-requeue", "--wait", "-W", "--test-only", "--parsable",
                 "--hold", "-H", "--overcommit", "-O", "--contiguous", "--spread-job"}
_SHORT = {"N": "nodes", "n": "ntasks", "G": "gpus", "c": "cpus_per_task", "t": "time", "p": "partition",
          "J": "job_name", "o": "output", "e": "error", "A": "account", "w": "nodelist", "x": "exclude",
          "C": "constraint", "q": "qos", "a": "array", "d": "dependency"}


def _options(words: list[str]) -> list[tuple[str, str]]:
    """(long name with underscores, value) of sbatch/srun-style options."""
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(words):
        w = words[k]
        if w.startswith("--"):
            name, eq, val = w[2:].partition("=")
            name = name.replace("-", "_")
            if not eq and f"--{name.replace('_', '-')}" not in _SBATCH_FLAGS and k + 1 < len(words) \
                    and not words[k + 1].startswith("-"):
                val = words[k + 1]
                k += 1
            out.append((name, val if (eq or val) else "true"))
        elif w.startswith("-") and len(w) >= 2:
            name = _SHORT.get(w[1], w[1])
            val = w[2:].lstrip("=")
            if not val and k + 1 < len(words) and not words[k + 1].startswith("-"):
                val = words[k + 1]
                k += 1
            out.append((name, val or "true"))
        k += 1
    return out


def _slurm_env(st: _State) -> None:
    """SLURM_* variables a batch script sees, from the #SBATCH options in force."""
    sb = st.sbatch

    def val(*names: str) -> tuple[str, str] | None:
        for n in names:
            if n in sb:
                return sb[n]
        return None

    def put(name: str, value: str, where: str) -> None:
        if st.find(name) is None or st.find(name).where[:1] == ("slurm",):  # type: ignore[union-attr]
            st.globals[name] = Var(value, None, (where,), True)

    nodes = val("nodes")
    if nodes and re.fullmatch(r"\d+", nodes[0]):
        put("SLURM_NNODES", nodes[0], nodes[1])
        put("SLURM_JOB_NUM_NODES", nodes[0], nodes[1])
    tpn = val("ntasks_per_node")
    if tpn and re.fullmatch(r"\d+", tpn[0]):
        put("SLURM_NTASKS_PER_NODE", tpn[0], tpn[1])
    nt = val("ntasks")
    if nt and re.fullmatch(r"\d+", nt[0]):
        put("SLURM_NTASKS", nt[0], nt[1])
        put("SLURM_NPROCS", nt[0], nt[1])
    elif nodes and tpn and nodes[0].isdigit() and tpn[0].isdigit():
        put("SLURM_NTASKS", str(int(nodes[0]) * int(tpn[0])), tpn[1])
        put("SLURM_NPROCS", str(int(nodes[0]) * int(tpn[0])), tpn[1])
    gpn = val("gpus_per_node")
    gres = val("gres")
    n_gpu = None
    if gpn:
        m = re.search(r"(\d+)$", gpn[0])
        n_gpu = (m.group(1), gpn[1]) if m else None
    elif gres:
        m = re.search(r"gpu(?::[\w.-]+)?:(\d+)", gres[0])
        n_gpu = (m.group(1), gres[1]) if m else None
    if n_gpu:
        put("SLURM_GPUS_ON_NODE", *n_gpu)
        put("SLURM_GPUS_PER_NODE", *n_gpu)
    cpt = val("cpus_per_task")
    if cpt and cpt[0].isdigit():
        put("SLURM_CPUS_PER_TASK", cpt[0], cpt[1])
    for name in ("SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID"):
        put(name, "0", "slurm")


def _join_into(st: _State, results: list[_State]) -> None:
    """`st` becomes the join of the branch states."""
    first = results[0]
    st.cwd = first.cwd if all(r.cwd == first.cwd for r in results) else st.cwd
    if not all(r.positional == first.positional for r in results):
        st.positional = [unknown("@")]
    else:
        st.positional = first.positional
    for r in results:
        st.funcs.update(r.funcs)
    names = set().union(*(set(r.globals) for r in results))
    for name in names:
        vals = [r.globals.get(name) for r in results]
        present = [v for v in vals if v is not None]
        where = tuple(dict.fromkeys(w for v in present for w in v.where))
        exported = any(v.exported for v in present)
        if len(present) == len(vals) and all((v.value, v.array) == (present[0].value, present[0].array) for v in present):
            st.globals[name] = Var(present[0].value, present[0].array, where, exported)
        else:
            st.globals[name] = Var(unknown(name), None, where, exported)
    for k, scope in enumerate(st.locals):
        for name in set().union(*(set(r.locals[k]) for r in results if k < len(r.locals))):
            vals = [r.locals[k].get(name) for r in results if k < len(r.locals)]
            present = [v for v in vals if v is not None]
            if len(present) == len(vals) and all(v.value == present[0].value for v in present):
                scope[name] = present[0]
            else:
                scope[name] = Var(unknown(name), None, tuple(w for v in present for w in v.where))
    sb = [r.sbatch for r in results]
    if all(s == sb[0] for s in sb):
        st.sbatch = sb[0]


class _TestExpr:
    """`test` / `[` / `[[` expressions over expanded words: True, False, or None when undecidable."""

    UNARY_STR = {"-z", "-n"}
    UNARY_FILE = {"-f", "-e", "-d", "-s", "-r", "-w", "-x", "-L", "-h"}
    BINARY = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~"}

    def __init__(self, words: list[str], interp: Interpreter, st: _State, double: bool) -> None:
        self.w = words
        self.i = 0
        self.interp, self.st, self.double = interp, st, double

    def run(self) -> bool | None:
        if not self.w:
            return False
        v = self.or_()
        return v if self.i >= len(self.w) else None

    def _is(self, *ops: str) -> bool:
        return self.i < len(self.w) and self.w[self.i] in ops

    def or_(self) -> bool | None:
        left = self.and_()
        while self._is("||", "-o"):
            self.i += 1
            right = self.and_()
            left = True if (left is True or right is True) else (None if None in (left, right) else False)
        return left

    def and_(self) -> bool | None:
        left = self.not_()
        while self._is("&&", "-a"):
            self.i += 1
            right = self.not_()
            left = False if (left is False or right is False) else (None if None in (left, right) else True)
        return left

    def not_(self) -> bool | None:
        if self._is("!"):
            self.i += 1
            v = self.not_()
            return None if v is None else not v
        return self.primary()

    def primary(self) -> bool | None:
        w = self.w
        if self._is("("):
            self.i += 1
            v = self.or_()
            if self._is(")"):
                self.i += 1
            return v
        if self.i + 2 < len(w) and w[self.i + 1] in self.BINARY:
            a, op, b = w[self.i], w[self.i + 1], w[self.i + 2]
            self.i += 3
            return self.binary(a, op, b)
        if w[self.i] in self.UNARY_STR | self.UNARY_FILE and self.i + 1 < len(w):
            op, a = w[self.i], w[self.i + 1]
            self.i += 2
            return self.unary(op, a)
        a = w[self.i]
        self.i += 1
        return None if is_unknown(a) else a != ""

    def unary(self, op: str, a: str) -> bool | None:
        if is_unknown(a):
            return None
        if op == "-z":
            return a == ""
        if op == "-n":
            return a != ""
        rel = self.interp.files.rel(a, self.st.cwd)
        if rel is None:
            return None  # outside the workdir: a data path, a system file: unknowable here
        if op == "-d":
            return self.interp.files.is_dir(rel)
        if op in ("-f", "-e", "-s", "-r"):
            return self.interp.files.exists(rel) or (op == "-e" and self.interp.files.is_dir(rel)) or None
        return None

    def binary(self, a: str, op: str, b: str) -> bool | None:
        if is_unknown(a) or is_unknown(b):
            return None
        if op in ("=", "=="):
            return fnmatch.fnmatchcase(a, b) if self.double else a == b
        if op == "!=":
            return not fnmatch.fnmatchcase(a, b) if self.double else a != b
        if op == "=~":
            try:
                return re.search(b, a) is not None
            except re.error:
                return None
        if op in ("<", ">"):
            return a < b if op == "<" else a > b
        try:
            x, y = int(a), int(b)
        except ValueError:
            return None
        return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[op]


def names_unknown(words: list[str]) -> list[str]:
    """Variables whose unknown values reached these words (for `why null` notes)."""
    out: list[str] = []
    for w in words:
        for n in unknown_names(w):
            if n not in out:
                out.append(n)
    return out


__all__ = ["Exec", "FileAccess", "Interpreter", "ShellRun", "expand_string", "names_unknown"]
