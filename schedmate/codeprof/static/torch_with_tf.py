"""A PyTorch job that imports TensorFlow for something else (file I/O through `tf.io.gfile`, TensorBoard, a
`tf.data` input pipeline): its batch and device conventions are PyTorch's.

Framework detection ranks TensorFlow above plain PyTorch when a file imports both, which is right for a Keras
or Estimator job that happens to import torch, and wrong for a torch training loop (`loss.backward()`) that
reads its files or data with TensorFlow. TensorFlow's conventions (the configured batch is the global batch a
strategy splits, one process computes on one GPU) then give wrong numbers, so the batch and device readers ask
this module which conventions hold.
"""

from __future__ import annotations

from typing import Any

# calls that train with TensorFlow (Keras fit, Estimators, TF 1.x sessions and optimizers, TF 2 tapes)
_TF_TRAINING = {"fit", "fit_generator", "train_on_batch", "GradientTape", "Estimator", "TPUEstimator",
                "train_and_evaluate", "Session", "MonitoredTrainingSession", "minimize", "apply_gradients",
                "compute_gradients", "run_experiment", "train_step"}


def trains_with_torch(calls: list[tuple[str, dict[str, Any]]]) -> str | None:
    """file:line of a torch autograd step (`loss.backward()`) in a job whose code has no TensorFlow training
    call; None otherwise (a job that trains both ways, or only with TensorFlow, keeps its framework)."""
    backward = None
    for rel, c in calls:
        tail = c["func"].rsplit(".", 1)[-1]
        if tail in _TF_TRAINING:
            return None
        if backward is None and tail == "backward" and "." in c["func"]:
            backward = f"{rel}:{c['line']}"
    return backward


def batch_framework(fw: Any, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """The framework whose batch conventions hold: PyTorch for a TensorFlow-detected job that trains with torch
    autograd and no TensorFlow training call, else `fw` unchanged."""
    return "pytorch" if fw == "tensorflow" and trains_with_torch(calls) is not None else fw
