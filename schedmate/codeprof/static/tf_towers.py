"""TensorFlow 1.x tower code: one copy of the model per local GPU, placed with `tf.device("/gpu:%d" % i)` over
the GPUs the job lists itself (`device_lib.list_local_devices()`, `tf.config.list_physical_devices("GPU")`).
Such a job computes on every GPU it can see, so its GPU count is what the submitter makes visible."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_LISTS_GPUS = re.compile(
    r"list_local_devices\s*\(|list_(physical|logical)_devices\s*\(\s*(device_type\s*=\s*)?['\"]GPU['\"]")
# a device string built from an index: '/gpu:%d' % i, "/gpu:{}".format(i), f"/device:GPU:{i}"
_INDEXED_DEVICE = re.compile(
    r"""['"]/(device:)?gpu:%d['"]\s*%|['"]/(device:)?gpu:\{\w*\}['"]\s*\.format\(|f['"]/(device:)?gpu:\{""",
    re.IGNORECASE)


def towers_over_local_gpus(py: Mapping[str, Any], read_text: Callable[[str], str | None]) -> str | None:
    """file:line of the first tower placement (`tf.device` from an indexed GPU string) in a file read that also
    lists the local GPUs, or None. Both in one file: a placement by a count the job's settings give
    (`for i in range(FLAGS.num_gpus)`) without listing the devices is left to the count readers."""
    for rel in py:
        text = read_text(rel) or ""
        if not _LISTS_GPUS.search(text):
            continue
        for k, line in enumerate(text.splitlines(), start=1):
            if _INDEXED_DEVICE.search(line) and not line.lstrip().startswith("#"):
                return f"{rel}:{k}"
    return None
