"""Where a cut traceback failed: the innermost frame's module names the failure when no exception line does.

Logs quoted in an issue, or cut by a dying job, often end inside a traceback: the frames are there, the
exception line that would name the failure is not. The monitor then knows only "a traceback" (`other`). The
innermost frame still says which machinery failed, and for two of them that is the category:

- a collective of `torch.distributed` (`distributed_c10d.py ... in all_gather`) or DeepSpeed's comm layer:
  the communication between ranks failed (`nccl`);
- PyTorch's DataLoader machinery itself (`dataloader.py ... in _get_iterator`, the worker, its signal
  handler), not the dataset code it calls (`_utils/fetch.py` hands over to the user's `__getitem__`): loading
  the data failed (`dataloader`).

Only the innermost frame counts (a frame of the user's code after it clears the hint), and only while no
exception line has named the failure: an exception line always wins (see `FailureTracker.on_error`).
"""

from __future__ import annotations

import re

from schedmate.logmon.failures import Candidate

_FRAME_HINTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nccl", re.compile(r'File "[^"\n]*?(?:torch[\\/]distributed[\\/]distributed_c10d\.py'
                        r'|deepspeed[\\/]comm[\\/][\w]+\.py)"')),
    ("dataloader", re.compile(r'File "[^"\n]*?torch[\\/]utils[\\/]data[\\/](?:dataloader\.py'
                              r'|_utils[\\/](?:worker|signal_handling|pin_memory)\.py)"')),
)

_CAUSES = {
    "nccl": "The log ends inside a collective of torch.distributed (the communication between ranks failed): {line}",
    "dataloader": "The log ends inside PyTorch's DataLoader machinery (loading the data failed): {line}",
}


def frame_hint(frame_line: str) -> str | None:
    """The category a traceback frame line points at when it is the innermost one, or None."""
    for category, pattern in _FRAME_HINTS:
        if pattern.search(frame_line):
            return category
    return None


def resolve_cut_tracebacks(candidates: list[Candidate]) -> None:
    """At the end of a log: a traceback no exception line named takes the category its innermost frame points at."""
    for c in candidates:
        hint = c.extra.get("frame_hint")
        if c.dismissed or not c.weak or not isinstance(hint, str):
            continue
        c.category, c.weak, c.cause = hint, False, _CAUSES[hint]
        c.text = str(c.extra.get("frame_text", c.text))
