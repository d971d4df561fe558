"""Write the code-analyzer dataset: jobs/<name>/ (files + command.txt [+ env.json]) and labels.jsonl.

Usage: python eval/datasets/code/build.py    (idempotent; rewrites jobs/ and labels.jsonl)
Every job is written by hand in gen/*.py in the style of a real framework; nothing is copied.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen import (  # noqa: E402,F401
    jobs_deepspeed_megatron,
    jobs_hf,
    jobs_holdout,
    jobs_hydra_wrappers,
    jobs_lightning,
    jobs_nanogpt,
    jobs_other,
    jobs_pytorch_ddp,
    jobs_pytorch_fsdp,
    jobs_pytorch_single,
    jobs_torchtitan,
)
from gen.common import JOBS  # noqa: E402


def main() -> None:
    out = HERE / "jobs"
    if out.exists():
        shutil.rmtree(out)
    names = [j["name"] for j in JOBS]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"duplicate job names: {sorted(dup)}")
    with open(HERE / "labels.jsonl", "w") as lab:
        for j in sorted(JOBS, key=lambda j: j["name"]):
            d = out / j["name"]
            for rel, text in j["files"].items():
                p = d / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(text)
            (d / "command.txt").write_text(j["command"] + "\n")
            if j["env"]:
                (d / "env.json").write_text(json.dumps(j["env"], indent=2) + "\n")
            lab.write(json.dumps({"job": j["name"], "notes": j["notes"], **j["label"]}) + "\n")
    print(f"wrote {len(JOBS)} jobs to {out}")


if __name__ == "__main__":
    main()
