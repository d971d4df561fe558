"""Failures a job states in its own words, with no exception or traceback behind them.

- Command-line tools built on `wasabi`-style messages (spaCy, Prodigy, Thinc and many small CLIs) print a failure
  as a line marked `✘` (or `[x]` where the console has no such glyph) and exit: `✘ Config validation error`,
  `[x] Invalid config override 'paths.dev': name should start with --`. What they reject is the command, the
  configuration or a path the user gave: a code (user) error.
- A job's own logging at ERROR or CRITICAL level saying it failed to set up its data (`- ERROR - Failed to
  initialize training and validation datasets and dataloaders!`, `[ERROR] could not load dataset`): a data
  loading failure. Only a line that says it failed and names the data, so an ERROR line about anything else
  keeps its generic reading.

When training goes on after such a line, the monitor's usual survival reading dismisses it
(`verdict.dismiss_survived`).
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

STATED_FAILURE_RULES: list[Rule] = [
    Rule(name="cli-fail-mark", kind="error:user_code", needles=("\u2718 ", "[x] "), ignore_case=False,
         pattern=r"^\s*(?:\u2718|\[x\]) \S",
         cause="The command-line tool rejected the command or its configuration and stopped: {line}"),
    Rule(name="logged-data-setup-failure", kind="error:dataloader", needles=("error", "critical"), ignore_case=False,
         pattern=r"\b(?:ERROR|CRITICAL)\b[^\n]*?\b(?i:failed to|unable to|could not|cannot|can't)\b[^\n]*?"
                 r"\b(?i:data ?loaders?|datasets?|data ?sets?)\b",
         cause="The job could not set up its data loading: {line}"),
]
