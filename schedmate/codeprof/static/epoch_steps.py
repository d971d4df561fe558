"""A run written as epochs of a fixed number of steps, the per-epoch count computed in the training function.

TensorFlow's Estimator trains for the `steps` it is given, so scripts that want epochs loop over them and
pass a per-epoch count they compute first (`steps_per_epoch = 60000 // FLAGS.batch_size`, then
`for epoch in range(FLAGS.epochs): estimator.train(input_fn, steps=steps_per_epoch)`); Keras scripts pass
the same local to `model.fit(steps_per_epoch=steps_per_epoch, epochs=...)`. When that local is a number the
sources fix (a literal dataset size over the batch option, not `len(data) // batch`), it is the run's steps
per epoch, and the batch pass multiplies it by the epochs (`STEPS_PER_EPOCH` in `names.py`). A count that
divides a number of examples by the batch setting makes each epoch one pass over the data, so the run states
both its epochs and its steps; a per-epoch count given as such (`num_iterations_per_epoch = 250`, Keras
`steps_per_epoch=args.steps`) makes "epochs" blocks of steps, and only the steps are the run's length.

Only a local whose name says it counts steps per epoch and that a training call takes as its `steps` or
`steps_per_epoch` counts: a value computed for a schedule or a privacy accountant is not the run's length.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.params import CODE_DEFAULT
from schedmate.codeprof.static.names import STEPS_PER_EPOCH

# the calls that take a per-epoch step count: Estimator-style `train(input_fn, steps=...)` and Keras `fit`
_TRAIN_CALL = re.compile(r"(^|\.)(train|fit|fit_generator)$")
_OVER_BATCH = re.compile(r"//\s*\(?\s*[\w.]*batch", re.IGNORECASE)


class EpochStepsMixin:
    r: Any
    _resolver: Any

    _pass_where: list[str] | None = None

    def _a_pass(self, per_epoch: tuple[Any, list[str]]) -> bool:
        """Whether the per-epoch count the run uses is this module's examples-over-batch local."""
        return self._pass_where is not None and list(per_epoch[1]) == self._pass_where

    def _local_steps_per_epoch(self) -> None:
        """Set a steps-per-epoch local of the job's code as a code default, when a training call takes it."""
        if self.r.params.get("steps_per_epoch") is not None:
            return  # an option or config already names it
        names = {n.lower() for n in STEPS_PER_EPOCH}
        for rel, s in self.r.py.items():
            passed = {c["kwargs"][k].strip(): c["line"] for c in s.get("calls", [])
                      if _TRAIN_CALL.search(c["func"]) for k in ("steps", "steps_per_epoch") if k in c["kwargs"]}
            for a in s.get("assigns", []):
                target = a["target"]
                if a["op"] is not None or "." in target or target.lower() not in names or target not in passed:
                    continue
                if a["line"] > passed[target]:
                    continue  # set after the call that uses it
                ok, v, ev = self._resolver.eval(a["expr"])
                if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    where = [f"{rel}:{a['line']}", f"{rel}:{passed[target]}", *ev]
                    self.r.params.set("steps_per_epoch", v, where, CODE_DEFAULT)
                    if _OVER_BATCH.search(a["expr"]):  # examples // batch: one pass over the data per epoch
                        self._pass_where = where
                    return


# the leaves that state a run length, and the prefixes that make a key the whole run's (`train_epochs`)
_LENGTH_LEAF = re.compile(r"^(epochs?|steps|iters|iterations|updates)$")
_RUN_PREFIX = r"(?:train|training|total|num|n|max)_?"


def shadowed_lengths(keys: list[str]) -> set[str]:
    """Keys of one nested settings dict whose run-length leaf belongs to a sub-schedule: a shallower key names
    the same length for the run (`{"train_epochs": 12.1, "ema": {"epochs": 10}}`: `ema.epochs` is the EMA's
    span, `train_epochs` the run's). They stay readable by their full path but not under the bare leaf."""
    out = set()
    for key in keys:
        parts = key.split(".")
        if len(parts) < 2 or not _LENGTH_LEAF.match(parts[-1].lower()):
            continue
        stem = parts[-1].lower().rstrip("s")
        run = re.compile(rf"^(?:{_RUN_PREFIX})?{stem}s?$")
        if any(len(o.split(".")) < len(parts) and run.match(o.rsplit(".", 1)[-1].lower()) for o in keys if o != key):
            out.add(key)
    return out
