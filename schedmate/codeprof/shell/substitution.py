"""Command substitution without running anything: `$(...)` has a value only for pure idioms whose result
follows from the script itself (`$(echo ...)`, `$(dirname "$0")`, `$(basename ...)`, `$(pwd)`,
`$(cd "$(dirname "$0")" && pwd)`, `$(expr ...)`, grep/awk over a file the job ships, node and GPU counts
inside a Slurm allocation); anything else is unknown."""

from __future__ import annotations

import re
from collections.abc import Callable

from schedmate.codeprof.shell.arith import _Arith
from schedmate.codeprof.shell.values import Lookup, Unknown, is_unknown, unknown

Expand = Callable[[str, Lookup], str]

_PURE_CD_PWD = re.compile(r"""^\s*cd\s+(?:-P\s+|-L\s+|--\s+)*(.+?)\s*(?:&?>\s*/dev/null\s*)?(?:2>&1\s*)?"""
                          r"""(?:&&|;)\s*pwd(?:\s+-P)?\s*$""")


def substitute(code: str, lk: Lookup, expand_string: Expand) -> str:
    """The value of `$(code)` when it follows from the script alone; otherwise unknown. Never runs it.
    `expand_string` is the word expander (expand.py), passed in so that this module sits below it."""
    code = code.strip()
    m = _PURE_CD_PWD.match(code)
    if m:
        target = expand_string(m.group(1), lk)
        if is_unknown(target):
            return unknown("pwd")
        return _normpath(target, lk.cwd())
    idiom = _counting_idiom(code, lk, expand_string)
    if idiom is not None:
        return idiom
    if re.match(r"^e?grep\s", code) and lk.read is not None:  # `grep 'x:' cfg.yaml | awk '{print $2}'`
        from schedmate.codeprof.shell.textutils import run_pipeline

        expanded = _expand_outside_single_quotes(code, lk, expand_string)
        if expanded is None:
            return unknown("$(grep ...)")
        got = run_pipeline(expanded, lk.read)
        return got[0] if got is not None else unknown("$(grep ...)")
    bc_value = _bc_idiom(code, lk, expand_string)
    if bc_value is not None:
        return bc_value
    words = _split_words(code)
    if words is None:
        return unknown("$(...)")
    if not words or any(w in ("|", "&&", "||", ";") for w in words) or "|" in code:
        return unknown(f"$({code[:40]})")
    if words[0] == "getopt":  # `$(getopt -o ... --long ... -- "$@")`: the normalised arguments
        from schedmate.codeprof.shell.getopt import normalise

        params: list[str] = []
        for a in words[1:]:
            v = lk.positional() if a in ("$@", "$*") else [expand_string(_requote(a), lk)]
            if any(is_unknown(x) for x in v):
                return unknown("$(getopt)")
            params += v
        got = normalise(params)
        return got if got is not None else unknown("$(getopt)")
    cmd, args = words[0], [expand_string(_requote(a), lk) for a in words[1:]]
    if cmd in ("dirname", "basename", "realpath", "readlink") and "--" in args:
        args.remove("--")  # the end of options: `dirname -- "$0"`
    if any(is_unknown(a) for a in args):
        return unknown(f"$({cmd})")
    if cmd == "echo":
        return " ".join(a for a in args if a not in ("-n", "-e"))
    if cmd == "pwd":
        return lk.cwd()
    if cmd == "dirname" and len(args) == 1:
        d = args[0].rstrip("/").rsplit("/", 1)
        return d[0] if len(d) == 2 and d[0] else ("/" if args[0].startswith("/") and len(d) == 2 else ".")
    if cmd == "basename" and args:
        b = args[0].rstrip("/").rsplit("/", 1)[-1]
        return b[: -len(args[1])] if len(args) > 1 and b.endswith(args[1]) else b
    if cmd in ("realpath", "readlink") and args:
        return _normpath(args[-1], lk.cwd())
    if cmd == "expr" and args:
        try:
            return str(_Arith(" ".join(args), lk).run())
        except Unknown:
            return unknown("$(expr)")
    return unknown(f"$({cmd})")


# pipelines batch scripts use to count their nodes or GPUs; inside a Slurm job their values are what the
# allocation says (the SLURM_* variables the #SBATCH options give), so they need not run
_COUNT_NODES = re.compile(r"""^scontrol\s+show\s+hostnames?\s+["']?\$\{?SLURM_(JOB_)?NODELIST\}?["']?\s*\|\s*wc\s+-l$""")
_COUNT_GPUS = re.compile(r"""^(nvidia-smi\s+(-L|--list-gpus)\s*\|\s*wc\s+-l|python3?\s+-c\s+["']import torch;\s*"""
                         r"""print\(torch\.cuda\.device_count\(\)\)["'])$""")
# counting the items of a comma-separated list held in a variable
_LIST = r"""(?P<list>["']?\$\{?\w+\}?["']?)"""
_COUNT_ITEMS = (
    re.compile(r"^echo\s+(-n\s+)?" + _LIST + r"""\s*\|\s*awk\s+-F\s*["']?,["']?\s+["']\{\s*print\s+NF;?\s*\}["']$"""),
    re.compile(r"^echo\s+(-n\s+)?" + _LIST + r"""\s*\|\s*tr\s+["']?,["']?\s+["']?\\n["']?\s*\|\s*wc\s+-l$"""),
    re.compile(r"""^jq\s+-n\s+["']\[(?P<list>\$\{?\w+\}?)\]\s*\|\s*length["']$"""),
)
# counting the commas of such a list (the caller adds one): `echo $DEVICES | grep -o , | wc -l`,
# `echo $DEVICES | tr -cd , | wc -c`
_COUNT_COMMAS = (
    re.compile(r"^echo\s+(-n\s+)?" + _LIST + r"""\s*\|\s*grep\s+-o\s+["']?,["']?\s*\|\s*wc\s+-l$"""),
    re.compile(r"^echo\s+(-n\s+)?" + _LIST + r"""\s*\|\s*tr\s+-cd\s+["']?,["']?\s*\|\s*wc\s+-c$"""),
)


def _counting_idiom(code: str, lk: Lookup, expand_string: Expand) -> str | None:
    """The value of a node- or GPU-counting pipeline inside a Slurm job, when the allocation fixes it."""
    if _COUNT_NODES.match(code):
        n = expand_string("${SLURM_JOB_NUM_NODES:-${SLURM_NNODES}}", lk)
        return n if not is_unknown(n) and n.isdigit() else unknown("$(scontrol show hostnames | wc -l)")
    if _COUNT_GPUS.match(code):
        n = expand_string("${SLURM_GPUS_ON_NODE}", lk)
        return n if not is_unknown(n) and n.isdigit() else unknown("$(GPU count)")
    for k, rx in enumerate(_COUNT_ITEMS):
        m = rx.match(code)
        if m:  # the number of items of a comma list (a GPU list): `echo $DEVICES | awk -F, '{print NF}'`
            items = expand_string(m.group("list"), lk)
            if is_unknown(items):
                return unknown("$(count of a list)")
            if k == 1:  # `tr , '\n' | wc -l` counts lines: an empty list is still one line
                return str(len(items.strip().split(",")))
            return str(len([x for x in items.split(",") if x.strip()]))
    for rx in _COUNT_COMMAS:
        m = rx.match(code)
        if m:
            items = expand_string(m.group("list"), lk)
            return unknown("$(count of commas)") if is_unknown(items) else str(items.count(","))
    return None


def _bc_idiom(code: str, lk: Lookup, expand_string: Expand) -> str | None:
    """`$(echo "EXPR" | bc)`: bc's integer result when EXPR expands to one integer expression; unknown when
    it does not; None when `code` is not this idiom."""
    from schedmate.codeprof.shell.bc import bc_eval, bc_operand

    operand = bc_operand(code)
    if operand is None:
        return None
    words = _split_words(operand)
    if not words:
        return unknown("$(echo ... | bc)")
    parts = [expand_string(_requote(w), lk) for w in words]
    if any(is_unknown(p) for p in parts):
        return unknown("$(echo ... | bc)")
    got = bc_eval(" ".join(parts))
    return str(got) if got is not None else unknown("$(echo ... | bc)")


def _expand_outside_single_quotes(code: str, lk: Lookup, expand_string: Expand) -> str | None:
    """`$VAR`/`${VAR}` replaced by their values outside single quotes (awk programs keep their `$2`); None
    when a value is unknown."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(code):
        c = code[i]
        if c == "'":
            quoted = not quoted
        if c == "$" and not quoted:
            m = re.match(r"\$\{(\w+)\}|\$(\w+)", code[i:])
            if m:
                v = expand_string(m.group(0), lk)
                if is_unknown(v):
                    return None
                out.append(v)
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _split_words(code: str) -> list[str] | None:
    """Shell words of `code`, an unquoted nested `$(...)` kept whole (`dirname $(dirname $exp_dir)`); None
    when the quoting or the parentheses do not balance."""
    import shlex

    held: list[str] = []
    out, i, quote = [], 0, ""
    while i < len(code):
        c = code[i]
        if quote != "'" and code.startswith("$(", i):
            depth, j = 0, i
            while j < len(code):
                depth += {"(": 1, ")": -1}.get(code[j], 0)
                if depth == 0 and code[j] == ")":
                    break
                j += 1
            if depth != 0:
                return None
            held.append(code[i:j + 1])
            out.append(f"\x00{len(held) - 1}\x00")
            i = j + 1
            continue
        if c in "'\"" and (not quote or quote == c):
            quote = "" if quote == c else c
        out.append(c)
        i += 1
    try:
        words = shlex.split("".join(out), comments=False, posix=True)
    except ValueError:
        return None
    return [re.sub(r"\x00(\d+)\x00", lambda m: held[int(m.group(1))], w) for w in words]


def _requote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'" if "$" not in word else word


def _normpath(path: str, cwd: str) -> str:
    import posixpath

    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)
