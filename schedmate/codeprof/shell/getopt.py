"""`options=$(getopt -o c:n: --long gpu:,config:,name: -- "$@")` without running anything: GNU getopt's
normalised argument string (each option with its value as a separate quoted word, `--`, then the operands),
which scripts then hand to `eval set -- "$options"` and walk with a `while true; case $1 in ...` loop.
Unknown when an argument is unknown or getopt would reject the arguments (it exits with an error then)."""

from __future__ import annotations

import shlex


def _specs(words: list[str]) -> tuple[str, list[str], list[str]] | None:
    """(short spec, long specs, parameters) from getopt's own arguments; None for a form not read here."""
    short, longs = "", []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-o", "--options") and i + 1 < len(words):
            short, i = words[i + 1], i + 2
        elif w in ("-l", "--long", "--longoptions") and i + 1 < len(words):
            longs += [x for x in words[i + 1].split(",") if x]
            i += 2
        elif w in ("-n", "--name") and i + 1 < len(words):
            i += 2
        elif w in ("-a", "--alternative", "-q", "--quiet", "-u", "--unquoted"):
            return None  # other output forms
        elif w == "--":
            return short, longs, words[i + 1:]
        else:
            return None  # the old `getopt optstring params` form
    return None


def normalise(words: list[str]) -> str | None:
    """GNU getopt's output for `getopt <words>` (words already expanded), or None when it cannot be known
    or getopt would fail."""
    got = _specs(words)
    if got is None:
        return None
    short, longs, params = got
    short = short.lstrip("+-")
    takes = {s.rstrip(":"): s.count(":") for s in longs}
    opts: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(params):
        p = params[i]
        i += 1
        if p == "--":
            rest += params[i:]
            break
        if p.startswith("--"):
            name, eq, val = p[2:].partition("=")
            match = [n for n in takes if n == name] or [n for n in takes if n.startswith(name)]
            if len(match) != 1:
                return None  # unknown or ambiguous option: getopt fails
            n = match[0]
            opts.append(f"--{n}")
            if takes[n] == 1 and not eq:
                if i >= len(params):
                    return None
                val, i = params[i], i + 1
            if takes[n] == 1 or (takes[n] == 2 and eq):
                opts.append(shlex.quote(val))
            elif takes[n] == 2:
                opts.append("''")
            elif eq:
                return None  # a value for an option that takes none
            continue
        if p.startswith("-") and len(p) > 1:
            k = 1
            while k < len(p):
                c = p[k]
                pos = short.find(c)
                if pos < 0 or c == ":":
                    return None
                n_colons = len(short[pos + 1:]) - len(short[pos + 1:].lstrip(":"))
                opts.append(f"-{c}")
                if n_colons >= 1:
                    val = p[k + 1:]
                    if not val and n_colons == 1:
                        if i >= len(params):
                            return None
                        val, i = params[i], i + 1
                    opts.append(shlex.quote(val) if val or n_colons == 1 else "''")
                    break
                k += 1
            continue
        rest.append(p)  # GNU getopt moves operands after the options
    return " ".join([*opts, "--", *(shlex.quote(r) for r in rest)])
