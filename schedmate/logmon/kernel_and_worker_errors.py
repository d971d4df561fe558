"""Two failures whose exception line names the wrong place, read before the generic `python-exception` rule of
`rules.py` (which would call the first a code error and does not see the second at all).

- **An exception re-raised from a data-loader worker.** PyTorch's DataLoader runs the dataset and the collate
  function in worker processes; what one raises comes back to the training loop wrapped, and the training
  loop's traceback ends in the wrapper: `RuntimeError: Caught KeyError in DataLoader worker process 3.` followed
  by `Original Traceback (most recent call last):` and the worker's own frames (since torch 1.2), or, in older
  versions, the worker's exception re-raised with the worker's whole traceback as its message
  (`KeyError: 'Traceback (most recent call last):\\n  File ".../dataloader.py", line 57, in _worker_loop ...'`).
  The root cause is in the data pipeline (a sample that does not load, a batch that does not collate), not in
  the training step the outer traceback points at: `dataloader`. The exception line the worker raised comes
  after the wrapper in the same failure block and does not change it.
- **A CUDA device-side assertion.** A kernel that checks its inputs (`t >= 0 && t < n_classes` in the loss, an
  index in bounds) prints one line per failing GPU thread, `Loss.cu:94: ...: block: [0,0,0], thread: [5,0,0]
  Assertion `t >= 0 && t < n_classes` failed.`, and the CUDA context is lost: the next CUDA call fails with
  `device-side assert triggered` (`RuntimeError: CUDA error: device-side assert triggered`, the old
  `cuda runtime error (59)`, `THCudaCheck FAIL ... error=59 : device-side assert triggered`, `cudaErrorAssert`).
  What failed is the data or the code feeding the kernel (labels out of range, a bad index): `user_code`, even
  when the assertion lines are all the log shows or the exception comes in a CUDA-library wrapper. PyTorch's
  hint `Compile with TORCH_USE_CUDA_DSA to enable device-side assertions` is advice printed under any CUDA error,
  not an assertion, and is not read as one.
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

KERNEL_AND_WORKER_ERROR_RULES: list[Rule] = [
    Rule(name="loader-worker-reraise", kind="error:dataloader", needles=("dataloader worker process", "_worker_loop"),
         pattern=r"\bCaught [\w.]+ in DataLoader worker process \d+"
                 r"|^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception): ['\"]Traceback \(most recent call last\):"
                 r"[^\n]*?\bin _worker_loop\b",
         cause="An exception in a DataLoader worker (the dataset or the collate function) ended the run: {line}"),
    Rule(name="cuda-device-assert", kind="error:user_code",
         needles=("device-side assert triggered", "assertion `", "error (59)", "error=59", "cudaerrorassert"),
         pattern=r"device-side assert triggered|\bcudaErrorAssert\b|cuda runtime error \(59\)|error=59\b"
                 r"|\.cu(?:h)?:\d+:[^\n]*?\bthread: \[[\d,\s]+\][^\n]*?Assertion `[^`\n]+` failed",
         cause="A CUDA kernel's assertion failed (an index or label out of range in the data or the code): {line}"),
]
