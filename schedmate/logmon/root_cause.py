"""The root cause among a multi-process job's failure lines: a worker's own exception, not what follows from it.

When one worker of a multi-process job fails, the log shows more than its exception. The launcher that ran the
workers reports the failure in its own words, and the other workers die of it:

- **Launcher wrappers.** `mp.spawn` re-raises in the parent: `torch.multiprocessing.spawn.ProcessRaisedException:`
  and `-- Process 1 terminated with the following error:` (the worker's traceback follows), or, for a worker
  that died without a Python exception, `ProcessExitedException: process 0 terminated with signal SIGTERM`
  (older torch: `Exception: process 3 terminated with signal SIGKILL`). `accelerate launch` and
  `torch.distributed.launch` raise `subprocess.CalledProcessError: Command '[...]' returned non-zero exit status
  1.`; torchrun's `ChildFailedError` summary and MPI's are read elsewhere (`rules.py`, `rank_failures`). A
  wrapper says *that* a worker failed, never *why*: it is a weak marker, like a `Traceback` line. The worker's
  own exception, printed before it or after it in the same block, sets the category; when the quote shows no
  such exception the failure stays `other` (its cause is not printed). In particular the signal a launcher
  names is the one that ended the worker, often the launcher's own teardown (`SIGTERM` to the survivors,
  `SIGKILL` from the OOM killer or a supervisor): it is not a scheduler's preemption. (`SIGSEGV`, `SIGILL`,
  `SIGFPE` name the crash itself and are left to the segfault rule.)
- **Interleaved ranks.** With rank prefixes (`[rank3]:`, `0: `, `[1,0]<stderr>:`), the ranks' lines interleave:
  rank 0's `Traceback` opens, rank 1's NCCL watchdog timeout (a consequence: rank 0 stopped joining the
  collectives) is printed, then rank 0's exception line ends its traceback. Read line by line, the timeout opens
  its own failure before rank 0's exception does. `attribute_root_cause` groups the failure evidence by rank:
  a rank's exception line closes the traceback that the same rank opened earlier, so its failure starts at
  that `Traceback` line, and the earliest failure (the verdict) is the worker that failed first.

The pass runs over the failure candidates only (a handful per log), never over lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedmate.logmon.rules import Rule

if TYPE_CHECKING:
    from schedmate.logmon.failures import Candidate

_SPAWN = r"(?:torch\.multiprocessing\.spawn\.)?"

WRAPPER_RULES: list[Rule] = [
    Rule(name="spawn-worker-raised", kind="error:other", weak=True,
         needles=("processraisedexception", "terminated with the following error"),
         pattern=rf"^{_SPAWN}ProcessRaisedException:|^-- Process \d+ terminated with the following error:",
         cause="A worker process started by mp.spawn raised an exception (its own traceback, when shown, "
               "says which): {line}"),
    Rule(name="spawn-worker-exited", kind="error:other", weak=True, needles=("terminated with",),
         pattern=rf"^(?:{_SPAWN}ProcessExitedException|Exception): process \d+ terminated with "
                 r"(?:exit code -?\d+|signal (?!SIG(?:SEGV|ILL|FPE)\b)SIG\w+)",
         cause="A worker process started by mp.spawn died and the parent stopped the job (the worker's cause "
               "is not printed): {line}"),
    Rule(name="launcher-child-failed", kind="error:other", weak=True, needles=("calledprocesserror",),
         pattern=r"^(?:subprocess\.)?CalledProcessError: Command\b",
         cause="The launcher's child process failed (its own error, when shown, is the cause): {line}"),
]
"""Before the generic exception rule (which would read a wrapper as a code error) and the termination rule
(which would read the signal a wrapper names as a preemption)."""

REACH_LINES = 400
"""How far apart a rank's `Traceback` line and its exception line may be (other ranks' lines in between)."""


def attribute_root_cause(candidates: list[Candidate]) -> None:
    """Let each rank's exception line close the traceback that rank opened before other ranks' lines came in:
    the failure starts at the `Traceback` line (see the module docstring). Idempotent."""
    opened: dict[int, Candidate] = {}  # rank -> its latest standing weak opener
    for c in sorted((c for c in candidates if not c.dismissed and c.rank is not None and c.source == "rule"),
                    key=lambda c: c.onset_line):
        rank = c.rank
        assert rank is not None
        if c.weak:
            opened[rank] = c
            continue
        w = opened.pop(rank, None)
        if w is None or w.dismissed or c.onset_line - w.last_line > REACH_LINES:
            continue
        c.onset_line = w.onset_line
        w.dismissed = True
