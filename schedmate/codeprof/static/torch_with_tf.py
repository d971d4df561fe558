"""Which framework a job trains with, when its code imports both PyTorch and TensorFlow.

A PyTorch job often imports TensorFlow for something else (file I/O through `tf.io.gfile`, TensorBoard, a
`tf.data` input pipeline, a TFRecord reader), and a Keras job sometimes imports torch for a tensor utility.
Imports alone rank TensorFlow first, which is right for the second and wrong for the first: TensorFlow's
conventions (the configured batch is the global batch a strategy splits, one process computes on one GPU) then
give wrong numbers. So the framework is decided by where the job trains: a torch autograd step
(`loss.backward()`) with no TensorFlow training call (Keras `fit`, an Estimator, a TF 1.x session or optimizer, a
TF 2 tape, `apply_gradients`) in the files that import TensorFlow is a PyTorch job. `model.py` ranks the
framework with it; the device reader (which runs before the framework is ranked) asks it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# calls that train with TensorFlow (Keras fit, Estimators, TF 1.x sessions and optimizers, TF 2 tapes)
_TF_TRAINING = {"fit", "fit_generator", "train_on_batch", "GradientTape", "Estimator", "TPUEstimator",
                "train_and_evaluate", "Session", "MonitoredTrainingSession", "minimize", "apply_gradients",
                "compute_gradients", "run_experiment", "train_step"}
_TF_MODULES = ("tensorflow", "keras", "tf_keras")


def _imports_tf(imports: list[str]) -> bool:
    return any(i.split(".")[0] in _TF_MODULES for i in imports)


def trains_with_torch(calls: list[tuple[str, dict[str, Any]]],
                      files: Mapping[str, dict[str, Any]] | None = None) -> str | None:
    """file:line of a torch autograd step (`loss.backward()`) in a job with no TensorFlow training call; None
    otherwise (a job that trains both ways, or only with TensorFlow, keeps its framework). With `files` (file ->
    its `pyast` summary), a TensorFlow training call counts only in a file that imports TensorFlow, and not when
    the job defines a function of that name itself: a torch trainer's own `fit` or `train_step` method does not
    train with Keras."""
    own = {f["name"] for s in (files or {}).values() for f in s["functions"]}
    backward = None
    for rel, c in calls:
        tail = c["func"].rsplit(".", 1)[-1]
        if tail in _TF_TRAINING and (files is None or (tail not in own and _imports_tf(files.get(rel, {}).get(
                "imports", [])))):
            return None
        if backward is None and tail == "backward" and "." in c["func"]:
            backward = f"{rel}:{c['line']}"
    return backward
