"""A bash interpreter for job scripts that never runs them: `interpret_command(command, wd, env)` follows
the submitted command line through wrapper scripts, `source`d files, functions, conditions and loops,
and returns every program it would start (`Exec`) with expanded arguments, environment and evidence.

`lexer` (tokens, here-documents) -> `parser` (syntax tree) -> `expand` (parameter expansion, quote
removal, field splitting; `values`: unknown values are marked, never guessed; `arith`: bash arithmetic) ->
`interp` (the walk, with `state` forked and joined over conditions it cannot decide; `builtins`: source,
cd, functions, nested scripts; `conditions`: test/[/[[; `slurm_env`: #SBATCH options).
"""

from __future__ import annotations

from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.shell.expand import ROOT, is_unknown, readable, unknown_names
from schedmate.codeprof.shell.interp import Exec, FileAccess, Interpreter, ShellRun, names_unknown
from schedmate.codeprof.shell.lexer import ShellSyntaxError


class WorkdirFiles(FileAccess):
    """The interpreter's view of a job's workdir: the analyzer's bounded, read-only reader."""

    def __init__(self, wd: Workdir) -> None:
        self.wd = wd

    def read(self, rel: str) -> str | None:
        return self.wd.read_text(rel)

    def exists(self, rel: str) -> bool:
        return self.wd.exists(rel)

    def is_dir(self, rel: str) -> bool:
        return self.wd.is_dir(rel)

    def rel(self, path: str, base: str) -> str | None:
        return self.wd.rel(path, base)


def interpret_command(command: str, wd: Workdir, env: dict[str, str] | None = None, cwd: str = "") -> ShellRun:
    """Every program the submitted `command` would start, run from `cwd` in the workdir."""
    run = Interpreter(WorkdirFiles(wd), env).command_line(command, cwd)
    for rel, (text, where) in run.virtual_files.items():
        wd.virtual.setdefault(rel, (text, where))
    return run


__all__ = ["ROOT", "Exec", "Interpreter", "ShellRun", "ShellSyntaxError", "WorkdirFiles", "interpret_command",
           "is_unknown", "names_unknown", "readable", "unknown_names"]
