"""Failures that surface as an ordinary Python exception but are not the training code's fault, read before the
generic `python-exception` rule of `rules.py` (which would call them code errors).

- **File descriptors exhausted** (`OSError: [Errno 24] Too many open files`, `EMFILE`): in a training job this
  is the data pipeline. PyTorch's DataLoader workers hand every batch to the main process through shared memory
  named by a file descriptor (the default `file_descriptor` sharing strategy), so many workers, deep prefetch or
  batches kept alive run the process out of descriptors; the traceback goes through `multiprocessing`
  (`resource_sharer`, `reduction.DupFd`) or the loader itself. Other pipelines opening a file per sample fail
  the same way. It is a data-loading failure (`dataloader`): fewer workers or a higher limit fix it.
- **The cuDNN library failing** (`CUDNN_STATUS_INTERNAL_ERROR`, `CUDNN_STATUS_NOT_INITIALIZED`,
  `CUDNN_STATUS_MAPPING_ERROR`, `CUDNN_STATUS_ARCH_MISMATCH`, TensorFlow's `Could not create cudnn handle`):
  PyTorch raises it as a `RuntimeError`, Paddle as an `OSError`, Caffe as a failed check. The library or its
  setup (driver, CUDA version, a GPU still held by another process) failed, not the job's code: `other`.
  Statuses that do name the caller's mistake (`CUDNN_STATUS_BAD_PARAM`, `CUDNN_STATUS_NOT_SUPPORTED`) stay code
  errors.
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

RESOURCE_ERROR_RULES: list[Rule] = [
    Rule(name="fd-exhausted", kind="error:dataloader", needles=("too many open files", "errno 24", "emfile"),
         pattern=r"Too many open files|\[Errno 24\]|\bEMFILE\b", ignore_case=True,
         cause="The process ran out of file descriptors (DataLoader workers sharing batches): {line}"),
    Rule(name="cudnn-library-failure", kind="error:other", needles=("cudnn",), ignore_case=True,
         pattern=r"CUDNN_STATUS_(?:INTERNAL_ERROR|NOT_INITIALIZED|MAPPING_ERROR|ARCH_MISMATCH|LICENSE_ERROR)\b"
                 r"|[Cc]ould not create cudnn handle",
         cause="The cuDNN library failed (its setup, not the job's code): {line}"),
]
