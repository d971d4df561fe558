"""Layered named values (code defaults < config files < command line) with evidence.

Every value is stored under its full dotted path and its leaf name, so `args.batch_size`,
`cfg.training.batch_size` and `training.batch_size` in a TOML file all meet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Layers, lowest first.
LIBRARY_DEFAULT = 0
CODE_DEFAULT = 1
CONFIG = 2
CONFIG_OVERRIDE = 3  # a config file named on the command line after the defaults (nanoGPT-style)
COMMAND_LINE = 4
RUNTIME = 5  # in-place code updates (nanoGPT's `gradient_accumulation_steps //= ddp_world_size`)


@dataclass
class PVal:
    value: Any
    where: list[str]
    layer: int
    key: str


def norm(key: str) -> str:
    return key.strip().lstrip("-").replace("-", "_").lower()


# a section of a config that is not the training run (evaluation, test, sampling, environment rollouts and data
# collection, a data-loading benchmark): its `max_steps` or `batch_size` is reachable by its full path only, never
# under the bare leaf name
_NOT_TRAINING_SECTION = re.compile(
    r"^(?:env_runner|envs?|rollouts?|collection|collector|benchmarks?|eval|evaluation|evaluator|val|valid|"
    r"validation|test|testing|sampling|sampler|generation|generate|inference|predict|prediction)(?:_\w*)?$|"
    # a named evaluation set (`_ade150_eval`, `coco_test`) and a learning-rate schedule (detectron2's
    # `lr_multiplier.scheduler.num_updates`, `lr_scheduler.total_steps`): its horizon is not the run length
    # (`train_eval`, a function that trains and evaluates, is the training run)
    r"^(?!\w*train)_*\w+_(?:eval|evaluation|test|testing|val|valid|validation)$|"
    r"^(?:lr_multiplier|lr_?sched(?:ule|uler)?)$")


def training_leaf(key: str) -> bool:
    """Whether a dotted key's sections are the training run's (not evaluation, sampling, rollouts)."""
    return not any(_NOT_TRAINING_SECTION.match(part) for part in key.split(".")[:-1])


class ParamSpace:
    def __init__(self) -> None:
        self._full: dict[str, PVal] = {}
        self._leaf: dict[str, PVal] = {}

    def set(self, key: str, value: Any, where: str | list[str], layer: int, leaf: bool = True) -> None:
        """Store under the dotted key and (unless `leaf=False`, for names that are ambiguous in their file)
        under the leaf name; a lower layer never replaces a higher one."""
        key = norm(key)
        pv = PVal(value, [where] if isinstance(where, str) else list(where), layer, key)
        tables = [(self._full, key)]
        if leaf and training_leaf(key):
            tables.append((self._leaf, key.rsplit(".", 1)[-1]))
        for table, k in tables:
            old = table.get(k)
            if old is None or layer >= old.layer:
                table[k] = pv

    def get(self, *names: str) -> PVal | None:
        """The first name found: exact dotted path first, then leaf."""
        for name in names:
            n = norm(name)
            full = self._full.get(n)
            leaf = self._leaf.get(n) if "." not in n else None
            if full is not None and leaf is not None:
                return leaf if leaf.layer > full.layer else full
            if full is not None or leaf is not None:
                return full or leaf
        return None

    def get_path(self, path: str) -> PVal | None:
        """Dotted path, falling back to ever shorter suffixes (`cfg.train.bs` -> `train.bs` -> `bs`)."""
        parts = norm(path).split(".")
        for i in range(len(parts)):
            cand = ".".join(parts[i:])
            if cand in self._full:
                return self._full[cand]
        return self._leaf.get(parts[-1])

    def items(self) -> list[tuple[str, PVal]]:
        return sorted(self._full.items())

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None
