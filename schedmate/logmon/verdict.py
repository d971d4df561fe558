"""Reading a failure by the log's structure, at the end of the log.

A line that names a failure is not always the end of the job. What the log does *after* it tells:

- **Survived**: the log ends in progress. The main counter advanced past where it stood when the error line
  appeared, and no error line follows that progress: a worker that segfaulted and was replaced, a warning
  worded like a failure, a retried call. (While following a live log, `FailureTracker.on_step` already
  dismisses such a candidate after a few steps; at the end of a log one advancing step is enough, since
  nothing comes after it.) A non-finite loss value is never survived: steps going on with a NaN loss are
  wasted.
- **Finished first**: the main counter reached its total (in the last epoch, when epochs are known) before a
  generic error (an uncategorised traceback, a code error): the error is in the clean-up after training,
  whose result is already there, as when the post-training validation pipeline fails to load. Specific
  failures (OOM, NCCL, a signal) keep their category.

It also holds the rules that must be tried before the benign look-alikes of `rules.py`: an fp16 loss-scaler
line is a benign skipped step, unless the scale it reduces to is below 1 (every step overflows even
unscaled: the loss diverged).
"""

from __future__ import annotations

from schedmate.logmon.comm_errors import COMM_ERROR_RULES
from schedmate.logmon.failures import FailureTracker
from schedmate.logmon.infra import INFRA_RULES
from schedmate.logmon.kernel_and_worker_errors import KERNEL_AND_WORKER_ERROR_RULES
from schedmate.logmon.launch_errors import LAUNCH_ERROR_RULES
from schedmate.logmon.rank_failures import RANK_FAILURE_RULES
from schedmate.logmon.research_prints import SHELL_SIGNAL_RULES
from schedmate.logmon.resource_errors import RESOURCE_ERROR_RULES
from schedmate.logmon.root_cause import WRAPPER_RULES
from schedmate.logmon.rules import Rule
from schedmate.logmon.stated_failures import STATED_FAILURE_RULES
from schedmate.logmon.tables import nonfinite_loss

EARLY_ERROR_RULES: list[Rule] = [
    # apex `Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 6.1e-05`, DeepSpeed
    # `Attempted loss scale: 1, reducing to 0.5`: a scale below 1 (a fraction or a negative exponent)
    Rule(name="loss-scale-underflow", kind="error:nan", needles=("loss scale",), ignore_case=True,
         pattern=r"loss scale[^\n]*?\breduc\w* (?:the )?(?:loss scale )?to (?:0(?:\.\d+)?|\d+(?:\.\d+)?e-\d+)\b",
         cause="The fp16 loss scale fell below 1 (every step overflows: the loss diverged): {line}"),
    *INFRA_RULES,  # the machine and the scheduler under the job: root cause first (see `infra`)
    *LAUNCH_ERROR_RULES,  # the interpreter refusing to start the job (no traceback for the exception rules)
    *SHELL_SIGNAL_RULES,  # the shell reporting its child killed by a signal (`research_prints`)
    *COMM_ERROR_RULES,  # NCCL's error-return trace, worded as INFO (see `comm_errors`)
    *STATED_FAILURE_RULES,  # a failure in the job's own words, no exception behind it (see `stated_failures`)
    *RESOURCE_ERROR_RULES,  # descriptors exhausted, cuDNN failing: exceptions that are not code errors
    *KERNEL_AND_WORKER_ERROR_RULES,  # a loader worker's re-raised exception, a CUDA kernel's assertion
    *RANK_FAILURE_RULES,  # a DataParallel replica's exception, an MPI/Horovod launcher's summary
    *WRAPPER_RULES,  # a launcher re-raising a worker's failure: weak, the worker's exception decides (`root_cause`)
]

GENERIC_CATEGORIES = ("other", "user_code")
"""Errors that a finished run's clean-up can raise; a specific failure keeps its category."""


def dismiss_survived(tracker: FailureTracker) -> None:
    """Dismiss the candidates the log went on training after (see the module docstring)."""
    line, step = tracker.last_step_line, tracker.last_step
    if line is None or step is None:
        return
    standing = [c for c in tracker.candidates if not c.dismissed]
    if not standing or line <= max(c.last_line for c in standing):
        return  # the log ends in an error, not in progress
    for c in standing:
        if c.sticky or c.source == "loss" or nonfinite_loss(c.text):
            continue
        if c.progress_after >= 1 and (c.step_at_onset is None or step > c.step_at_onset):
            c.dismissed = True


def dismiss_after_finish(tracker: FailureTracker, finished_line: int | None) -> bool:
    """Dismiss the generic errors raised after the counter reached its total at `finished_line`; True when
    one was (the run finished, its clean-up failed)."""
    if finished_line is None:
        return False
    hit = False
    for c in tracker.candidates:
        if not c.dismissed and c.onset_line > finished_line and (c.weak or c.category in GENERIC_CATEGORIES) \
                and c.source in ("rule",):
            c.dismissed = hit = True
    return hit


def reached_total(step: int | None, total: int | None, per_epoch: bool, epoch: float | None,
                  total_epochs: int | None, epoch_base: int) -> bool:
    """Whether the main counter stands at its total in the run's last epoch (a counter that restarts every
    epoch with no known number of epochs never counts as done)."""
    if step is None or not total or step < total:
        return False
    if total_epochs is None:
        return not per_epoch
    return epoch is not None and epoch - epoch_base + 1 >= total_epochs
