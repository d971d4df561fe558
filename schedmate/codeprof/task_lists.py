"""Multi-task configs that list their tasks (`TASKS: [{NAME: imagenet, DATALOADER: {TRAIN_BATCH_SIZE: 32}}, ...]`):
each task carries its own loader settings, which the trainer reads from the task's entry. When exactly one entry
trains (has a training batch), its settings are the run's; with several training tasks the batch is ambiguous and
nothing is taken from the list."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.configs import flatten

_TRAIN_BATCH = re.compile(r"^(train_?batch_?size|batch_?size_?train|train_?bs|(imgs|samples|images)_?per_?(gpu|batch))$",
                          re.IGNORECASE)
_NAME = re.compile(r"^(name|task|task_?name)$", re.IGNORECASE)


def _trains(entry: dict[str, Any]) -> bool:
    return any(_TRAIN_BATCH.match(k.rsplit(".", 1)[-1]) and isinstance(v, int) and not isinstance(v, bool) and v > 0
               for k, v in flatten(entry))


def single_training_task(cfg: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(the list's key, the one training task's entry) of a top-level list of named task mappings, or None."""
    found: list[tuple[str, dict[str, Any]]] = []
    for key, value in cfg.items():
        if not isinstance(value, list) or not value or not all(isinstance(e, dict) for e in value):
            continue
        if not all(any(_NAME.match(str(k)) for k in e) for e in value):
            continue  # not a task list: entries without a name (a list of layer specs, of dataset paths)
        found.extend((str(key), e) for e in value if _trains(e))
    return found[0] if len(found) == 1 else None
