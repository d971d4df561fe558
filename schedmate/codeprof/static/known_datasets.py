"""Steps of an epoch-based run over a dataset whose size is fixed by its name.

A script that trains on `torchvision.datasets.CIFAR10(root, train=True, download=True)` trains on 50,000
images whatever machine it runs on, so an epoch count becomes a step count: ceil (or floor, with
`drop_last=True`) of the samples each process sees over the loader's batch, times the epochs. Only
when the script builds one such training set and the loader's batch and the world are known.
"""

from __future__ import annotations

import math
import re
from typing import Any

from schedmate.codeprof.launch import to_int

# data table: training-split sizes of datasets a script downloads by name (torchvision's defaults)
TRAIN_SIZES = {
    "CIFAR10": 50000,
    "CIFAR100": 50000,
    "MNIST": 60000,
    "FashionMNIST": 60000,
    "KMNIST": 60000,
    "QMNIST": 60000,
    "SVHN": 73257,
    "STL10": 5000,
}
_TRAIN_SPLIT_KW = {"train": True, "split": "train"}  # the default of each dataset's split argument


class KnownDatasetsMixin:
    r: Any
    _resolver: Any
    _world: int | None
    _one_process_many_gpus: str | None
    _find_calls: Any  # RuntimeMixin's

    def _known_train_set(self) -> tuple[str, int, str] | None:
        """(variable, size, file:line) of the one fixed-size training set the job builds by name."""
        found: dict[str, tuple[str, int, str]] = {}
        for rel, c in self._find_calls(*TRAIN_SIZES):
            name = c["func"].rsplit(".", 1)[-1]
            head = c["func"].rsplit(".", 1)[0] if "." in c["func"] else ""
            if head and not re.search(r"(^|\.)(datasets|torchvision)$", head):
                continue  # another library's class of the same name
            split = next((k for k in _TRAIN_SPLIT_KW if k in c["kwargs"]), None)
            if split is not None:
                ok, v, _ = self._resolver.eval(c["kwargs"][split])
                if not ok or v != _TRAIN_SPLIT_KW[split]:
                    continue  # a test split, or one the sources leave open
            var = next((a["target"] for a in self.r.py.get(rel, {}).get("assigns", [])
                        if a["line"] == c["line"]), None)
            if var:
                found[name] = (var, TRAIN_SIZES[name], f"{rel}:{c['line']}")
        return next(iter(found.values())) if len(found) == 1 else None

    def _known_dataset_steps(self) -> None:
        r = self.r
        epochs, micro = r.val("epochs"), r.val("micro_batch_size")
        if r.val("train_steps") is not None or not isinstance(epochs, int) or epochs <= 0:
            return
        got = self._known_train_set()
        if got is None:
            return
        var, size, where = got
        loader = next(((rel, c) for rel, c in self._find_calls("DataLoader")
                       if (c["args"][:1] or [c["kwargs"].get("dataset", "")])[0].strip() == var), None)
        if loader is None:
            return
        rel, c = loader
        ok, drop, _ = self._resolver.eval(c["kwargs"].get("drop_last", "False"))
        if self._one_process_many_gpus or self._world == 1:
            batch, per_rank = r.val("global_batch_size") or micro, size
        elif (self._world or 0) > 1 and self._find_calls("DistributedSampler"):
            batch, per_rank = micro, math.ceil(size / self._world)  # type: ignore[operator]
        else:
            return
        b = to_int(batch)
        if not ok or not b or b <= 0:
            return
        per_epoch = per_rank // b if drop is True else math.ceil(per_rank / b)
        r.put("train_steps", per_epoch * epochs, [where, f"{rel}:{c['line']}", *r.facts["epochs"].evidence],
              note=f"{size} training samples of a dataset fixed by its name")
