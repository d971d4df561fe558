"""Reading old Python that today's parser refuses.

Research code from the PyTorch 0.3 era still circulates: `tensor.cuda(async=True)` (the keyword became
`non_blocking` when `async` turned into a reserved word in Python 3.7), Python 2 `print "..."` statements,
`exec "..."`, backticks. One such line makes `ast.parse` reject the whole file, and with it the argparse
defaults, the batch size and the epoch count the file states plainly. `repair_legacy` rewrites the one
documented rename (`async=` as a keyword argument -> `non_blocking=`) and otherwise replaces each line the
parser rejects with `pass` at the same indentation, until the file parses. Dropping a line can only lose
information, never invent a value: what the dropped line set is simply not read. The caller notes which
lines were dropped.
"""

from __future__ import annotations

import ast
import re

MAX_DROPPED_LINES = 12
"""beyond this many rejected lines the file is not really Python 3 code: give up rather than guess"""

_ASYNC_KWARG = re.compile(r"([(,]\s*)async(\s*=(?!=))")
_INDENT = re.compile(r"[ \t]*")


def _parses(text: str) -> SyntaxError | None:
    try:
        ast.parse(text)
    except SyntaxError as e:
        return e
    except ValueError as e:  # null bytes
        return SyntaxError(str(e))
    return None


def _stand_in(line: str, indent: str) -> str:
    """What replaces a rejected line: `pass`, or for a block header a header that keeps its block
    (Python 2 `except ValueError, e:` becomes `except Exception:`)."""
    if not line.rstrip().endswith(":"):
        return f"{indent}pass"
    return f"{indent}except Exception:" if line.strip().startswith("except") else f"{indent}if True:"


def repair_legacy(text: str) -> tuple[str, list[int]] | None:
    """The text made parseable, with the 1-based numbers of the lines replaced by `pass`; None when it
    cannot be made to parse by dropping at most MAX_DROPPED_LINES lines (or it parsed already)."""
    err = _parses(text)
    if err is None:
        return None
    text = _ASYNC_KWARG.sub(r"\1non_blocking\2", text)
    lines = text.split("\n")
    dropped: list[int] = []
    for _ in range(MAX_DROPPED_LINES + 1):
        err = _parses("\n".join(lines))
        if err is None:
            return "\n".join(lines), dropped
        n = err.lineno
        if n is None or not 1 <= n <= len(lines) or n in dropped or len(dropped) >= MAX_DROPPED_LINES:
            return None
        line = lines[n - 1]
        indent = _INDENT.match(line).group(0)  # type: ignore[union-attr]
        if not line.strip():
            return None
        lines[n - 1] = _stand_in(line, indent)
        dropped.append(n)
    return None
