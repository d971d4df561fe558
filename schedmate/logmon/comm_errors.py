"""NCCL's own trace of a failed call, read before the benign `NCCL INFO` rule of `rules.py`.

With `NCCL_DEBUG=INFO`, every NCCL call that returns an error prints where it returned and the error code, one
line per frame as the error climbs out: `host:1234:1301 [0] NCCL INFO transport/net.cc:412 -> 2`,
`... NCCL INFO init.cc:1022 -> 2`. Ordinary INFO lines never end in `-> <code>` (a ring or channel line reads
`0[0] -> 1[1] via P2P/IPC`, the peer in brackets), so a source location followed by a nonzero code is the
failure itself, often with no `NCCL WARN` or exception worded as an error (the exception may come later, or
not be in the log at all). When training goes on after such a chain (an optional plugin probed and skipped),
the monitor's usual survival reading dismisses it (`verdict.dismiss_survived`).
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

COMM_ERROR_RULES: list[Rule] = [
    Rule(name="nccl-return-trace", kind="error:nccl", needles=("nccl info",), ignore_case=False,
         pattern=r"NCCL INFO [\w./-]+\.(?:cc|cu|h|c):\d+ -> [1-9]\d*\s*$",
         cause="NCCL reports a failed call (its error-return trace, code after the arrow): {line}"),
]
