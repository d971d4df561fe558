"""The text utilities scripts use to read their own configs (`grep 'x:' cfg.yaml | awk '{print $2}'`,
`grep -qE '^\\s*use_vllm:\\s*true' "$CONFIG"`), evaluated over workdir files as the programs would, without
running anything: grep (-E -q -m N -v -i -o -c, fixed strings with -F), awk `{print $N}` (with -F), head, tail,
wc -l, cut -d -f, tr -d. Anything else in the pipeline makes the result unknown (None).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

MAX_INPUT_BYTES = 1 << 20

Read = Callable[[str], "str | None"]


def _ere(pattern: str) -> str:
    """A POSIX (extended) regex as Python's re: bracket classes mapped, `\\s`/`\\w` kept (GNU grep has them)."""
    classes = {"[:space:]": r"\s", "[:digit:]": r"\d", "[:alpha:]": "a-zA-Z", "[:alnum:]": "a-zA-Z0-9",
               "[:upper:]": "A-Z", "[:lower:]": "a-z", "[:blank:]": r" \t"}
    for k, v in classes.items():
        pattern = pattern.replace(k, v)
    return pattern


def _grep(args: list[str], lines: list[str] | None, read: Read) -> tuple[list[str], bool] | None:
    flags = ""
    rest: list[str] = []
    max_count = None
    k = 0
    while k < len(args):
        a = args[k]
        if a == "-m" and k + 1 < len(args):
            max_count = int(args[k + 1]) if args[k + 1].isdigit() else None
            k += 2
            continue
        if a == "-e" and k + 1 < len(args):
            rest.insert(0, args[k + 1])
            k += 2
            continue
        if a.startswith("-") and len(a) > 1 and not rest:
            if not re.fullmatch(r"-[EqivocFwxhHPn]+", a):
                return None
            flags += a[1:]
        else:
            rest.append(a)
        k += 1
    if not rest:
        return None
    pattern, files = rest[0], rest[1:]
    if files:
        lines = []
        for f in files:
            text = read(f)
            if text is None or len(text) > MAX_INPUT_BYTES:
                return None
            lines.extend(text.splitlines())
    if lines is None:
        return None
    if "F" in flags:
        pattern = re.escape(pattern)
    else:
        pattern = _ere(pattern if "E" in flags or "P" in flags else pattern.replace(r"\+", "+").replace(r"\?", "?"))
    if "w" in flags:
        pattern = rf"\b(?:{pattern})\b"
    if "x" in flags:
        pattern = rf"^(?:{pattern})$"
    try:
        rx = re.compile(pattern, re.IGNORECASE if "i" in flags else 0)
    except re.error:
        return None
    out = [ln for ln in lines if bool(rx.search(ln)) != ("v" in flags)]
    if max_count is not None:
        out = out[:max_count]
    status = bool(out)
    if "o" in flags:
        out = [m.group(0) for ln in out for m in rx.finditer(ln)]
    if "c" in flags:
        out = [str(len(out))]
    return ([] if "q" in flags else out), status


def _awk(args: list[str], lines: list[str]) -> list[str] | None:
    sep = None
    prog = None
    k = 0
    while k < len(args):
        if args[k] == "-F" and k + 1 < len(args):
            sep = args[k + 1]
            k += 2
        elif args[k].startswith("-F"):
            sep = args[k][2:]
            k += 1
        else:
            prog = args[k]
            k += 1
            break
    m = re.fullmatch(r"\s*\{\s*print\s+\$(\d+|NF)\s*;?\s*\}\s*", prog or "")
    if not m or k < len(args):  # a file argument or another program: not modelled
        return None
    out = []
    for ln in lines:
        fields = ln.split(sep) if sep else ln.split()
        if m.group(1) == "NF":
            out.append(fields[-1] if fields else "")
        else:
            i = int(m.group(1))
            out.append(ln if i == 0 else (fields[i - 1] if i <= len(fields) else ""))
    return out


def _head_tail(name: str, args: list[str], lines: list[str]) -> list[str] | None:
    n = 10
    if args:
        m = re.fullmatch(r"-n?(\d+)", args[0]) if len(args) == 1 else None
        if args[0] == "-n" and len(args) == 2 and args[1].isdigit():
            n = int(args[1])
        elif m:
            n = int(m.group(1))
        else:
            return None
    return lines[:n] if name == "head" else (lines[-n:] if n else [])


def _cut(args: list[str], lines: list[str]) -> list[str] | None:
    opts = dict(re.findall(r"-([df])\s*(\S+)", " ".join(args)))
    if "f" not in opts or not opts["f"].isdigit():
        return None
    sep = opts.get("d", "\t").strip("'\"") or "\t"
    i = int(opts["f"])
    return [(ln.split(sep)[i - 1] if i <= len(ln.split(sep)) else ln) for ln in lines]


def run_pipeline(code: str, read: Read) -> tuple[str, bool] | None:
    """(standard output without the trailing newline, exit status) of a pipeline of the utilities above over
    workdir files; None when some stage is not one of them (its output is then unknown)."""
    stages = [s.strip() for s in re.split(r"(?<!\|)\|(?!\|)", code)]
    lines: list[str] | None = None
    status = True
    for s in stages:
        try:
            words = shlex.split(s)
        except ValueError:
            return None
        if not words:
            return None
        name, args = words[0], words[1:]
        if name in ("grep", "egrep"):
            got = _grep(["-E", *args] if name == "egrep" else args, lines, read)
            if got is None:
                return None
            lines, status = got
        elif lines is None:
            return None  # every other stage reads the previous one's output
        elif name == "awk":
            lines = _awk(args, lines)
        elif name in ("head", "tail"):
            lines = _head_tail(name, args, lines)
        elif name == "wc" and args == ["-l"]:
            lines = [str(len(lines))]
        elif name == "cut":
            lines = _cut(args, lines)
        elif name == "tr" and len(args) == 2 and args[0] == "-d":
            lines = [ln.translate({ord(c): None for c in args[1]}) for ln in lines]
        else:
            return None
        if lines is None:
            return None
    return "\n".join(lines or []), status
