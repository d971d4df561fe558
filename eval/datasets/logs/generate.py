"""Generate the labelled log dataset (seeded, deterministic): `python eval/datasets/logs/generate.py`.

Every log is written by this script in the *style* of a real framework's output (no text copied from a
project), with realistic noise: NCCL INFO chatter, warnings, interleaved rank prefixes, tqdm carriage
returns, ANSI colours, timestamps. Labels go to `labels.jsonl`, one object per log:

    file, framework, scenario, category, failed, onset_line (1-based, first line of the failure; for a hang
    the first line after the last progress line), total_steps, current_step (main counter at the end, as
    the framework prints it), epoch, total_epochs, iteration_time_s (the true mean time per step),
    lines, finished.

The writer and the framework styles are in `loggen/writer.py` and `loggen/frameworks.py`, the scenarios
(failure kinds, benign look-alikes, one whole log) in `loggen/scenarios.py`; this script plans and writes them.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261122
sys.path.insert(0, str(HERE))

from loggen.frameworks import FRAMEWORKS, Novel  # noqa: E402
from loggen.scenarios import BENIGN, FAIL_KINDS, NOVEL_FAIL, SPECIAL, make_log  # noqa: E402
from loggen.writer import Framework  # noqa: E402


def generate(out: Path = HERE, seed: int = SEED) -> list[dict]:
    rng = random.Random(seed)
    plan: list[tuple[type[Framework], str]] = []
    fws = list(FRAMEWORKS)
    i = 0
    for sc in FAIL_KINDS + SPECIAL + BENIGN + NOVEL_FAIL:
        n = 3 if sc in FAIL_KINDS + BENIGN else 2
        if sc in ("nan_loss", "hang", "novel_progress"):
            n = 3
        for _ in range(n):
            plan.append((Novel if sc == "novel_progress" else fws[i % len(fws)], sc))
            i += 1
    labels = []
    for idx, (fw_cls, sc) in enumerate(plan):
        text, label = make_log(idx, fw_cls, sc, rng)
        name = f"{idx:03d}_{label['framework']}_{sc}.log"
        (out / name).write_text(text, encoding="utf-8", newline="")
        label = {"file": name, "scenario": sc, **label, "lines": text.count("\n")}
        labels.append(label)
    with open(out / "labels.jsonl", "w") as fh:
        fh.writelines(json.dumps(lab) + "\n" for lab in labels)
    return labels


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    labs = generate(out)
    print(f"wrote {len(labs)} logs to {out}")
