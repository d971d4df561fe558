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
  that `Traceback` line, and the earliest failure (the verdict) is the worker that failed first. A peer's
  consequence (an aborted communicator, a collective timeout, a dropped connection, the launcher's SIGTERM)
  printed on another rank just before a rank's own failure (out of memory, a code error, the data loader, a
  crash, a NaN: nothing a peer's failure causes) follows from it and yields to it.

The pass runs over the failure candidates only (a handful per log), never over lines.
"""

from __future__ import annotations

from typing import Protocol

from schedmate.logmon.rules import Rule


class Candidate(Protocol):
    """What the pass reads and sets of `failures.Candidate` (a protocol, so that neither module imports the
    other's)."""

    dismissed: bool
    weak: bool
    rank: int | None
    source: str
    rule: str | None
    category: str
    onset_line: int
    last_line: int

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
    # Horovod's own words for a peer's failure (`... Unknown: Horovod has been shut down. This was caused by an
    # exception on one of the ranks ...`): every surviving rank prints it; the failed rank's exception is the cause
    Rule(name="horovod-shut-down", kind="error:other", weak=True, needles=("horovod has been shut down",),
         pattern=r"\bHorovod has been shut down\b",
         cause="Horovod stopped after one of the ranks failed (that rank's exception, when shown, is the cause): "
               "{line}"),
    Rule(name="launcher-child-failed", kind="error:other", weak=True, needles=("calledprocesserror",),
         # an exit status that names a signal (137, 139, 143) or the signal itself (`died with <Signals.SIGSEGV`)
         # says how the child died: left to the exit-status and signal rules. `died with <Signals.SIGKILL: 9>`
         # stays this weak wrapper: no signal rule reads it, and a kill with no cause printed is `other`
         pattern=r"^(?:subprocess\.)?CalledProcessError: Command\b(?![^\n]*(?:exit status (?:13[79]|143)\b"
                 r"|died with <Signals\.(?!SIGKILL\b)))",
         cause="The launcher's child process failed (its own error, when shown, is the cause): {line}"),
]
"""Before the generic exception rule (which would read a wrapper as a code error) and the termination rule
(which would read the signal a wrapper names as a preemption)."""

REACH_LINES = 400
"""How far apart a rank's `Traceback` line and its exception line may be (other ranks' lines in between)."""

PEER_CONSEQUENCES = frozenset({"nccl-error", "watchdog-timeout", "connection", "connection-retry", "sigterm",
                               "closing-signal", "exit-sigterm"})
"""Rules whose lines a rank prints because a peer failed: its communicator aborted, its collective timed out,
the connection to the peer dropped, the launcher's SIGTERM."""

OWN_FAILURES = frozenset({"oom", "user_code", "dataloader", "segfault", "nan"})
"""Categories a rank's own exception has and a peer's failure never causes."""


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
    _dismiss_peer_consequences(candidates)


def _dismiss_peer_consequences(candidates: list[Candidate]) -> None:
    """A peer's consequence printed just before a rank's own failure (stderr of several ranks interleaves): the
    rank's own failure is the root, the consequence follows from it."""
    own = [c for c in candidates if not c.dismissed and not c.weak and c.rank is not None and c.source == "rule"
           and c.category in OWN_FAILURES]
    if not own:
        return
    for c in candidates:
        if c.dismissed or c.weak or c.rank is None or c.rule not in PEER_CONSEQUENCES:
            continue
        if any(f.rank != c.rank and 0 < f.onset_line - c.onset_line <= REACH_LINES for f in own):
            c.dismissed = True
