"""One GPU documented by the launch script itself: `# Works on a single A100 80G`, `train_single_gpu.sh`.

A job that runs as one plain process and would use every visible GPU (the HF Trainer's DataParallel, a
Lightning Trainer taking `device_count()` devices) leaves its GPU count to the submitter, unless the script
that launches it says which machine it is for. A comment of that script naming one GPU (`single GPU`,
`one GPU`, `1 GPU`, `single A100`, `1x V100`), or its file name doing so (`..._singleA100.sh`,
`run_single_gpu.sh`, `train_1gpu.sh`), is that statement. A script that also names several GPUs anywhere
(`8 GPUs`, `4x A100`, `multi-GPU`) states nothing usable.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from schedmate.codeprof.launch.model import Launch, Setting

_GPU_WORD = r"(?:gpus?|[ahvlt]\d{1,3}0?s?|a\d{4}s?|rtx\s*\d{4}s?|\d{4}s?|cards?)"
_ONE = re.compile(rf"(?i)\b(?:single|one|1)\s*[-_]?\s*(?:x\s*)?(?:(?:nvidia|tesla|geforce)\s+)?{_GPU_WORD}\b")
_MANY = re.compile(rf"(?i)\bmulti(?:ple)?[-_\s]*{_GPU_WORD}\b|\b(?:[2-9]|\d{{2,}})\s*[-_]?\s*(?:x\s*)?"
                   rf"(?:(?:nvidia|tesla|geforce)\s+)?{_GPU_WORD}\b|\b(?:two|four|eight)\s+{_GPU_WORD}\b")
_ONE_IN_NAME = re.compile(r"(?i)single[-_]?(?:gpu|[ahv]100|card)|(?:^|[-_.])(?:1|one)[-_]?gpu(?:[-_.]|$)")


def launch_script(launch: Launch | None) -> str | None:
    """The innermost shell script of the launch chain (the file holding the training command)."""
    if launch is None:
        return None
    scripts = [c.split(":", 1)[1] for c in launch.chain if c.startswith("sh:")]
    return scripts[-1] if scripts else None


def documented_single_gpu(launch: Launch | None, read: Callable[[str], str | None]) -> Setting | None:
    """Setting(1, [script:line]) when the launch script's comments or file name name one GPU and nothing in
    it names several; None otherwise."""
    rel = launch_script(launch)
    if rel is None:
        return None
    text = read(rel)
    if text is None:
        return None
    comments = [(i, ln) for i, ln in enumerate(text.splitlines(), 1)
                if ln.lstrip().startswith("#") and not ln.startswith("#!")]
    if any(_MANY.search(ln) for _, ln in comments):
        return None
    for i, ln in comments:
        if _ONE.search(ln):
            return Setting(1, [f"{rel}:{i}"])
    if _ONE_IN_NAME.search(rel.rsplit("/", 1)[-1]):
        return Setting(1, [rel])
    return None
