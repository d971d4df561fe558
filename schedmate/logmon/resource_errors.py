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
- **A CUDA runtime error in its older wording.** Before PyTorch 1.5 (and in Torch7/Lua, Caffe and other C++
  code) a failed CUDA call reads `cuda runtime error (30) : unknown error at .../THCStorage.c:113` or
  `THCudaCheck FAIL file=... line=51 error=30 : unknown error`, not `CUDA error: unknown error`. The words after
  the code are the same as in the newer form and mean the same: `unknown error` (30, 999) is the driver or the
  GPU failing (`node`), `out of memory` (2) is device memory exhausted (`oom`).
- **A checkpoint write cut short.** Torch7's `write error: wrote 39776036 blocks instead of 41251350`, PyTorch's
  `PytorchStreamWriter failed writing file data/228: file write failed` and `[Errno 5] Input/output error` on a
  write: the file system took fewer bytes than the job wrote (a full or failing disk), as `No space left on
  device` says outright: `other`, not the code.
- **A program catching its own OOM and retrying smaller** (`OOM Detected, reducing batch/grad size to 24/1.`,
  the pattern of accelerate's `find_executable_batch_size`): device memory ran out; whether the run survives is
  known only later, so the line is tentative (`oom` unless training goes on afterwards).
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
    Rule(name="legacy-cuda-unknown-error", kind="error:node", needles=("unknown error",), ignore_case=True,
         pattern=r"(?:cuda runtime error \((?:30|999)\) *:|\berror=(?:30|999) *:) *unknown error",
         cause="The GPU or its driver failed (CUDA 'unknown error'): {line}"),
    Rule(name="legacy-cuda-oom", kind="error:oom", needles=("out of memory",), ignore_case=True,
         pattern=r"(?:cuda runtime error \(2\) *:|\bTHCudaCheck FAIL\b[^\n]*?\berror=2 *:) *out of memory",
         cause="CUDA out of memory: {line}"),
    Rule(name="short-write", kind="error:other",
         needles=("blocks instead of", "failed writing file", "file write failed", "input/output error"),
         pattern=r"\bwrote \d+ blocks instead of \d+|PytorchStreamWriter failed writing file|\bfile write failed\b"
                 r"|\[Errno 5\] Input/output error",
         cause="A write to the file system came up short (a full or failing disk): {line}"),
    Rule(name="oom-retry-smaller", kind="error:oom", needles=("oom",), tentative=True,
         pattern=r"\bOOM\b[^\n]{0,40}?\b(?:[Dd]etected|[Rr]educing|[Rr]etrying)\b",
         cause="Device memory ran out; the program retries with a smaller batch: {line}"),
]
