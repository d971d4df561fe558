"""What the interpreter walks with: bounds, the records it produces (`Exec`, `ShellRun`), the file view it reads through, and the per-path state forked and joined over undecidable branches."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.shell.expand import (
    unknown,
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
             "timeout", "stdbuf", "nice", "ionice", "unbuffer", "singularity", "apptainer", "xvfb-run", "chrt",
             "uv", "poetry", "pipenv", "pdm", "rye", "pixi", "hatch", "conda", "mamba", "micromamba", "ray"}
# batch systems other than Slurm whose submit command runs a job script: PBS/Torque and LSF
BATCH_SUBMITTERS = {"qsub", "bsub"}
# environment managers that are set-up utilities (`conda activate x`) except as `conda run -n x cmd ...`
RUNNER_UTILITIES = {"conda", "mamba"}


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
    background: bool = False
    """started with `&`: it runs beside the commands that follow"""
    parallel: int = 1
    """copies of this command started side by side (set by the launcher when it counts them)"""


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
    background: bool = False

    def fork(self) -> _State:
        """A copy whose assignments do not reach this state (Vars are replaced, never changed in place)."""
        return _State(dict(self.globals), [dict(s) for s in self.locals], list(self.positional), self.cwd,
                      self.script, self.depth, self.conditional, list(self.prefix), dict(self.sbatch),
                      dict(self.funcs), list(self.stack), self.background)

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
