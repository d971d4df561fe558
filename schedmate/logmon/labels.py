"""What a counter line says about itself: the description before its number (a bar's label), and whether that
description names side work (evaluation, data preparation, metrics) rather than training. Split from
`progress.py` along this seam; `progress` re-exports the names."""

from __future__ import annotations

import re
from functools import lru_cache

from schedmate.logmon.ingest import case_folds_as_lower

# words at a word start: `Validation`, `Detecting objects`, `Class Images ... mAP50`, `Map` (datasets), not
# `interval`, `latest` or `classifier`
_SIDE_LABEL = re.compile(r"\b(?:val(?:id|\b|_)|eval|test|detect|comput|infer|predict|sampl|generat|decod|map\b|map\d"
                         r"|precision|recall|class(?!if)|load|download|fetch|prepar|tokeniz|filter|sanity|metric|score"
                         r"|cach(?:e|ing)\b)",
                         re.IGNORECASE)
_SIDE_WORDS = ("val", "test", "detect", "comput", "infer", "predict", "sampl", "generat", "decod", "map",
               "precision", "recall", "class", "load", "fetch", "prepar", "tokeniz", "filter", "sanity", "metric",
               "score", "cach")
_TRAIN_LABEL = re.compile(r"train|\bepoch|\bstep|\biter|\bfit\b|\bbatch", re.IGNORECASE)


def counter_label(text: str, m: re.Match[str]) -> str | None:
    """What a counter line says before its step number (a bar's description); None when the rule has no
    step group."""
    if "step" not in m.re.groupindex or m.start("step") < 0:
        return None
    return text[:m.start("step")]


# a description that says outright it is evaluation, even beside the epoch: `Epoch 15 (validation) acc=0.9:`
_STRONG_SIDE = re.compile(r"\b(?:validation|validating|evaluation|evaluating|testing|inferenc(?:e|ing))\b|\((?:val|valid|eval|test)\)",
                          re.IGNORECASE)


# what a bar without a description of its own has before its counter: `100% 6/6 [`, `  3%|▎  | 120/4000 [`
_BARE = re.compile(r"^[\s\d.%|#=>▏▎▍▌▋▊▉█━─-]*$")
_COUNTERISH = re.compile(r"\d+ ?/ ?\d+|%\|")


def own_or_previous_label(label: str | None, previous: str | None) -> str | None:
    """A bar with no description of its own is described by the line just before it when that line is a
    short phrase and no progress print itself (`caching latents.` then `100% 6/6 [00:12<00:00, 2.00s/it]`)."""
    if label is None or not _BARE.match(label) or not previous:
        return label
    prev = previous.strip()
    if not prev or len(prev) > 60 or _COUNTERISH.search(prev):
        return label
    return prev


DATA_BAR_RATE = 1000.0
"""Iterations per second above which a bar counts data (vectors loaded, files read), not training steps."""


@lru_cache(maxsize=4096)  # a pure function of the label, and a log repeats its bars' descriptions
def side_label(label: str | None) -> bool:
    """A counter described as evaluation, data preparation or metrics work (and not as training)."""
    if not label:
        return False
    if case_folds_as_lower(label):
        low = label.lower()
        for w in _SIDE_WORDS:  # every branch of `_SIDE_LABEL` and `_STRONG_SIDE` has one: none, no match
            if w in low:
                break
        else:
            return False
    if _STRONG_SIDE.search(label) is not None:
        return True
    return _SIDE_LABEL.search(label) is not None and _TRAIN_LABEL.search(label) is None
