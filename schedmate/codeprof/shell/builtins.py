"""Commands the interpreter follows itself: shell builtins, function calls, nested scripts and `test`."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from schedmate.codeprof.shell.conditions import _TestExpr
from schedmate.codeprof.shell.expand import (
    Unknown,
    arithmetic,
    is_unknown,
    unknown,
)
from schedmate.codeprof.shell.parser import (
    Simple,
)
from schedmate.codeprof.shell.slurm_env import _SBATCH_FLAGS, _options, _slurm_env
from schedmate.codeprof.shell.state import (
    _ASSIGN,
    _SCRIPT_SUFFIXES,
    _SHELLS,
    _WRAPPERS,
    BATCH_SUBMITTERS,
    MAX_DEPTH,
    Var,
    _Break,
    _Exit,
    _Return,
    _State,
)
from schedmate.codeprof.shell.values import MARK


class BuiltinsMixin:
    """Builtins, function calls, nested scripts (`bash x.sh`, `sbatch x.sh`, `srun bash x.sh`) and conditions."""

    def _kaldi_options(self, st: _State, node: Simple) -> bool:
        """Kaldi's `. utils/parse_options.sh` (also ESPnet, icefall, asteroid recipes): leading `--name value`
        arguments set the script's variable `name` (dashes become underscores) when it is already defined;
        `--config f` sources `f` first. The consumed arguments are shifted away."""
        pos = list(st.positional)
        for i, a in enumerate(pos[:-1]):
            if a == "--config" and (rel := self._script_path(pos[i + 1], st)) is not None:
                self._run_file(rel, st)
        while len(pos) >= 2 and pos[0].startswith("--") and "=" not in pos[0] and pos[0] != "--config":
            name = pos[0][2:].replace("-", "_")
            old = st.find(name)
            if old is None or not name.isidentifier():
                self.run.notes.append(f"{st.script}:{node.line}: parse_options.sh: --{name} is no variable of "
                                      "the script (the recipe would stop)")
                break
            st.put(name, Var(pos[1], None, (st.where(node.line),), old.exported))
            pos = pos[2:]
        while len(pos) >= 2 and pos[0] == "--config":
            pos = pos[2:]
        st.positional = pos
        return True

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
        if prog == "read":
            return self._read(argv, st, node, prefix_env)
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
            if argv[1].rsplit("/", 1)[-1] == "parse_options.sh":
                return self._kaldi_options(st, node)
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
        if is_unknown(path) and not path.rsplit(MARK, 1)[1].startswith("/"):
            return None  # only `$UNSET/known/tail` can still be found (as a path into the author's clone)
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
        if prog in BATCH_SUBMITTERS:
            # PBS/Torque `qsub [options] job.pbs`, LSF `bsub [options] job.lsf`: the batch script runs once on the
            # first node of the allocation, as a plain script (its #PBS/#BSUB lines are comments to the shell); the
            # launcher inside it (mpirun, torchrun) starts the processes
            for k in range(len(argv) - 1, 0, -1):
                if not argv[k].startswith("-") and (rel := self._script_path(argv[k], st)) is not None:
                    return rel, argv[k + 1:], []
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
                 prefix_env: dict[str, tuple[str, set[str]]], sbatch: bool, text: str | None = None) -> None:
        """Run a nested script (`rel`; or `text`, a batch script given on sbatch's standard input)."""
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
        if text is not None:  # `sbatch <<EOF`: the here-document is the batch script
            self._sbatch_headers(text, rel, child)
        if sbatch and child.sbatch:
            _slurm_env(child)
        if text is None:
            self._run_file(rel, child, sbatch_headers=True)
            return
        old_script, child.script = child.script, rel
        try:
            self._source_text(text, rel, child)
        finally:
            child.script = old_script

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

    def _read(self, argv: list[str], st: _State, node: Simple, prefix_env: dict[str, tuple[str, set[str]]]) -> bool:
        """`IFS=, read -ra ARR <<< "$CUDA_VISIBLE_DEVICES"` and `read -r A B <<< "x y"`: the here-string split on
        IFS into the named variables (an array with -a). Input from anywhere else is unknown to us: the named
        variables become unknown, never empty."""
        array, names, k = None, [], 1
        while k < len(argv):
            t = argv[k]
            if t.startswith("-") and len(t) > 1 and not names:
                if "a" in t[1:]:
                    array = argv[k + 1] if t.endswith("a") and k + 1 < len(argv) else None
                    k += 2 if t.endswith("a") else 1
                    continue
                k += 2 if t[-1] in "dnNpt u" else 1
                continue
            names.append(t)
            k += 1
        targets = [array] if array else names or ["REPLY"]
        where = (st.where(node.line),)
        here = next((r for r in node.redirects if r.op == "<<<" and r.target is not None), None)
        text = " ".join(self._expand(here.target, st, split=False)[0]) if here is not None else None
        if text is None or MARK in text:
            for n in targets:
                st.put(n, Var(unknown(n), None, where))
            return True
        ifs = prefix_env["IFS"][0] if "IFS" in prefix_env else (st.find("IFS").value if st.find("IFS") else None)
        ifs = " \t\n" if ifs is None else ifs
        seps = "[" + re.escape(ifs) + "]+" if ifs.strip() == "" else "[" + re.escape(ifs) + "]"
        fields = [f for f in re.split(seps, text.strip(" \t\n"))] if ifs else [text]
        if fields and fields[-1] == "" and ifs.strip():
            fields.pop()  # a trailing separator ends the last field, it starts no empty one
        if array:
            st.put(array, Var(None, fields, where))
            return True
        for j, n in enumerate(targets):
            if j == len(targets) - 1:
                rest = fields[j:]
                st.put(n, Var((ifs[0] if ifs else " ").join(rest) if rest else "", None, where))
            else:
                st.put(n, Var(fields[j] if j < len(fields) else "", None, where))
        return True
