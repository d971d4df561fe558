"""A Lightning run the code sets to no epoch limit: `args.max_epochs = -1` before `Trainer.from_argparse_args(args)`.

Lightning's Trainer trains 1000 epochs when told neither `max_epochs` nor `max_steps`; a job whose code assigns
`max_epochs = -1` (Lightning's "no limit") to the namespace it builds the Trainer from runs until something
else stops it (a token budget, a callback, the user), so it has no configured epoch count.
"""

from __future__ import annotations

from typing import Any


def epochs_unlimited_in_code(py: dict[str, Any]) -> str | None:
    """file:line of an unconditional `<...>.max_epochs = -1` in the job's code (the script's main guard
    aside), else None."""
    for rel, s in py.items():
        for a in s.get("assigns", []):
            guards = [w for w in a.get("when") or [] if w.replace('"', "'") != "__name__ == '__main__'"]
            if guards or a["target"].rsplit(".", 1)[-1] != "max_epochs":
                continue
            if (a.get("expr") or "").replace(" ", "") in ("-1", "(-1)"):
                return f"{rel}:{a['line']}"
    return None
