"""Lines about the machine and the scheduler under the job, read before the code-level rules of `rules.py`.

Root cause first: when a line names both what killed the job and why, the why decides the category.

- A GPU lost to the node (`unspecified launch failure`, a device handle that cannot be read) is a hardware
  fault of the node, not a kernel bug of the job: the same job runs on another node.
- A job preempted or cancelled *because its node failed* (`job preempted (node failure)`, Slurm's
  `DUE TO NODE FAILURE`) failed with its node; a priority preemption or a time limit stays `preempted`.
- A cloud reclaiming a spot / preemptible machine announces it (`termination is imminent`, a spot
  interruption or preemption notice): the job was preempted, whatever comes after.

And two look-alikes that are no failure and no progress:

- a directory listing (`ls -l`) of checkpoints: `epoch=47-step=528.ckpt` names a file, not the counter;
- an out-of-memory event the program reports and works around (`WARNING ... OOM ..., skipping batch`): the
  monitor also dismisses the OOM lines just before it (`FailureTracker.on_worked_around`).
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

WORKED_AROUND = ("oom-worked-around", "oom-skipped")
"""Benign rules whose line says the out-of-memory event before it was handled (see `monitor`)."""

INFRA_RULES: list[Rule] = [
    Rule("node-failure", r"\bnode fail(?:ure|ed)\b", "error:node", ("node fail",),
         cause="The job ended because its node failed: {line}", ignore_case=True),
    Rule("gpu-lost", r"unspecified launch failure|cudaErrorLaunchFailure|Unable to determine the device handle for GPU"
         r"|\bGPU is lost\b|GPU (?:has )?fallen off", "error:node",
         ("unspecified launch", "launchfailure", "device handle", "gpu is lost", "fallen off"),
         cause="A GPU failed on the node (lost or faulted in hardware or driver): {line}", ignore_case=True),
    Rule("spot-reclaimed", r"termination is imminent|\bspot (?:instance )?interruption\b|\bpreemption notice\b"
         r"|\binstance (?:is being|was|has been) (?:preempted|reclaimed)\b", "error:preempted",
         ("termination", "interruption", "preemption notice", "preempted", "reclaimed"),
         cause="The cloud reclaimed the (spot / preemptible) machine: {line}", ignore_case=True),
    Rule("runner-job-failed", r"^[\w.-]+: (?:job|task) failed\b", "error:other", ("failed",), weak=True,
         cause="The job runner reports the training job failed (its cause is in another log): {line}"),
    # `-rw-r--r-- 1 user group 209M Nov 29 10:59 'epoch=27-step=308.ckpt'`, `drwxr-xr-x. 2 ...`
    Rule("file-listing", r"^[-dlbcps][r-][w-][xsS-][r-][w-][xsS-][r-][w-][xtT-][.+@]?\s+\d+\s", "benign",
         ("rw-", "rwx", "r--", "r-x")),
    Rule("oom-skipped", r"(?:WARNING|[Ww]arning:)[^\n]*?\bOOM\b[^\n]*?(?:\bskipp(?:ing|ed)\b|\bretrying\b"
         r"|\bfall(?:ing)? ?back\b|\busing (?:the )?CPU\b)", "benign", ("oom",)),
]
