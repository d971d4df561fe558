"""Progress prints of research code quoted in issue threads (the nineteenth real-log wave), kept apart from
`rules.py` (full) and `custom_counters.py`:

- a loop's counter, then the position inside it as a bracketed fraction with its percentage, for a loop other
  than the epoch (`Train Iter: 3 [18000/81000 (22%)]`): the fraction is the counter, the loop's number beside
  it (`EARLY_RESEARCH_RULES`, ahead of the generic `iter n` readers);
- a step fraction followed by the epoch's fraction (`train: 20/900 @ epoch:0/10`): the first is the step;
- keys written in brackets before their colon (`[epoch]: 4, [batch]: 1200, [loss]: 2.1`);
- a keyword, its count in brackets, then a colon (`step [812]: loss: 3.2`), and an epoch count in brackets
  after `Epoch:` with no step fraction after it (`Epoch: [12] Avg accuracy 0.81; Average Loss 0.45`);
- a phase, its epoch and a fraction in one bracket with a dash between them (`[TRAIN 2 - 40/500]: avg loss ..`);
- a tqdm bar of an iterable with no length (`37it [00:12,  3.05it/s]`): the count and the rate;
- a phase, then its step and rate between pipes (`train | step:   180 | steps/sec:    2.4 | output:`, TF Model
  Garden's controller): a rate printed to one decimal below 1 step/s (`0.1`) is too coarse to time with
  (0.05-0.15 is 7-20 s per step), so only a rate of 1 or more is read and timestamps time the rest;
- two bare integers opening a line before a named loss (`12 340 Loss=0.051 Time=0.041`): the epoch, the
  iteration inside it, and the seconds that iteration took.

The shell's own report of a child killed by a signal (`zsh: segmentation fault  python3 fit.py`) is an error rule
(`SHELL_SIGNAL_RULES`, matched early: no traceback or exit status follows it).
"""

from __future__ import annotations

from schedmate.logmon.rules import F, Rule


def _p(name: str, pattern: str, needles: tuple[str, ...], **kw: object) -> Rule:
    return Rule(name=name, pattern=pattern, kind="progress", needles=needles, **kw)  # type: ignore[arg-type]


EARLY_RESEARCH_RULES: list[Rule] = [
    _p("loop-then-percent-fraction", rf"\b(?:iter|iteration|round|part|chunk|archive)\b:? ?(?P<epoch>\d+) \[ *(?P<step>\d+) ?/ ?"
       rf"(?P<total_steps>\d+) \( *\d+(?:\.\d+)?%\)\](?:[^\n]*?\bloss\b ?[:=]? ?(?P<loss>{F}))?", ("%)]",), ignore_case=True),
    _p("fraction-then-epoch-fraction", r"\b(?P<step>\d+) ?/ ?(?P<total_steps>\d+)\W{1,4}(?:@ ?)?epoch\W{0,3}(?P<epoch>\d+) ?/ ?"
       r"(?P<total_epochs>\d+)\b", ("epoch",), ignore_case=True),
]

EXTRA_RESEARCH_RULES: list[Rule] = [
    _p("bracketed-keys", rf"\[epoch\] ?[:=] ?(?P<epoch>\d+)\W{{1,4}}\[(?:batch|step|iter|iteration)\] ?[:=] ?(?P<step>\d+)"
       rf"(?:[^\n]*?\[(?:train_)?loss\] ?[:=] ?(?P<loss>{F}))?", ("[epoch]",), ignore_case=True),
    _p("keyword-bracket-colon-loss", rf"^(?:step|iter|iteration|batch) ?\[ ?(?P<step>\d+) ?\]: +(?:train(?:ing)? +)?loss ?[:=] ?"
       rf"(?P<loss>{F})", ("step", "iter", "batch"), ignore_case=True),
    _p("epoch-bracket-metrics", rf"^epoch:? ?\[(?P<epoch>\d+)\](?! *\[)(?! */)[^\n]*?\bloss\b ?[:=]? ?(?P<loss>{F})",
       ("epoch",), ignore_case=True, epoch_counter=True),
    _p("phase-epoch-dash-fraction", r"^\[(?:train|training)\b ?:? ?(?P<epoch>\d+) ?- ?(?P<step>\d+) ?/ ?(?P<total_steps>\d+) ?\]",
       ("train",), ignore_case=True),
    _p("lengthless-tqdm", rf"^(?P<step>\d+)it \[[\d:]+(?:<[\d:?]+)?, +(?:(?P<it_s>{F})it/s|(?P<s_it>{F})s/it)\]", ("it [",)),
    _p("phase-pipes-step-rate", r"^(?:train|training) *\| *step: +(?P<step>\d+) *\| *steps/sec: +(?:(?P<it_s>[1-9]\d*(?:\.\d+)?)"
       r"|\d*\.\d+)\b", ("steps/sec",), ignore_case=True),
    _p("bare-pair-loss", rf"^(?P<epoch>\d+) (?P<step>\d+) loss ?[:=] ?(?P<loss>{F})(?: time ?[:=] ?(?P<s_it>{F})\b)?",
       ("loss",), ignore_case=True),
]

SHELL_SIGNAL_RULES: list[Rule] = [
    Rule(name="shell-reports-segfault", kind="error:segfault", needles=("segmentation fault",), ignore_case=True,
         pattern=r"^(?:zsh|bash|sh|dash|ksh|fish)(?:: line \d+)?: (?:\d+ )?segmentation fault\b",
         cause="The shell reports the job's process killed by a segmentation fault: {line}"),
]
