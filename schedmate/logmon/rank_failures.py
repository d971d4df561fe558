"""Failures of one worker among several, as the parent that ran the workers reports them, read before the
generic rules of `rules.py`.

- **A DataParallel replica's exception.** `torch.nn.DataParallel` runs the model's forward on every GPU in a
  thread and re-raises what a replica raised in the training loop, wrapped: `StopIteration: Caught StopIteration
  in replica 0 on device 0.` (or `RuntimeError: Caught RuntimeError in replica 1 on device 1.`), then `Original
  Traceback (most recent call last):` and the replica's own frames and exception. The wrapper says only that
  the model's code failed in a replica: a code error (`user_code`) when nothing more is said (the quote ends
  there, or the wrapped class is one the generic exception rule does not know, as `StopIteration`), but a
  weak one, so that the replica's own exception line after it (`RuntimeError: CUDA out of memory ...`) sets
  the category, as a line after `Traceback` does. (A DataLoader worker's wrapper is different: its cause is the
  data pipeline whatever it raised; see `kernel_and_worker_errors`.)
- **An MPI or Horovod launcher's summary.** When one rank fails, `mpirun` and `horovodrun` stop the job and say
  which process failed first: Open MPI's `Primary job  terminated normally, but 1 process returned a non-zero
  exit code.`, `mpirun detected that one or more processes exited with non-zero status`, `mpirun noticed that
  process rank 1 with PID 4242 on node gpu7 exited on signal 9 (Killed).`, Horovod's `RuntimeError: Horovod
  detected that one or more processes exited with non-zero status`. The summary is the root as far as the log
  shows it: the other ranks (or their containers) are then killed by the launcher, and their exit statuses
  (`exit code 137`) are the teardown, not a memory kill; so the summary is a specific failure (`other`, the
  cause not printed) that the teardown lines after it in the same block do not change, while a rank's own
  error printed before it (an OOM, a traceback) is earlier and wins. A rank killed by signal 11 or 15 is read
  by the segfault and termination rules (they match `signal 11` / `signal 15` on the same line first).
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

RANK_FAILURE_RULES: list[Rule] = [
    Rule(name="dataparallel-replica-reraise", kind="error:user_code", needles=("in replica",), weak=True,
         pattern=r"\bCaught [\w.]+ in replica \d+ on device \d+",
         cause="The model's code raised in a DataParallel replica: {line}"),
    Rule(name="mpi-launcher-summary", kind="error:other",
         needles=("primary job", "process returned", "processes exited with non-zero", "mpirun noticed"),
         pattern=r"\bPrimary job +terminated normally, but \d+ process(?:es)? returned"
                 r"|\b(?:mpirun|Horovod) detected that one or more processes exited with non-zero status"
                 r"|\bmpirun noticed that process rank \d+ [^\n]*?exited on signal (?!11\b|15\b)\d+",
         cause="A rank of the MPI/Horovod job failed and the launcher stopped the job (its cause is not "
               "printed): {line}"),
]
