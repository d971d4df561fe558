"""Rows of `mlperf_epochs.csv` from a local snapshot of an MLPerf training-results repository.

    python -m eval.realjobs.calibration.mlperf_epochs <snapshot git dir> [...] > eval/realjobs/calibration/mlperf_epochs.csv

One row per submitted run (`<submitter>/results/<system>/<benchmark>/result_N.txt`) of a benchmark whose log
marks epochs (`epoch_start` / `epoch_stop` MLLOG events): the median wall seconds of its epochs after the
first (the first holds warm-up and compilation), with the system's accelerator model and count from
`<submitter>/systems/<system>.json`. Only numbers are kept; the logs stay in the snapshot.
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

BENCHMARKS = ("resnet", "ssd", "maskrcnn", "transformer", "gnmt")
_RESULT = re.compile(r"^([^/]+)/results/([^/]+)/([^/]+)/result_(\d+)\.txt$")
_MLLOG = re.compile(r":::MLLOG (\{.*\})")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def gpu_family(name: str) -> str | None:
    for fam in ("A100", "V100", "T4"):
        if fam.lower() in name.lower():
            return fam
    return None


def epoch_seconds(text: str) -> tuple[list[float], int | None]:
    """Epoch durations in order, and the logged global batch size."""
    starts: dict[int, float] = {}
    out: list[tuple[int, float]] = []
    batch = None
    for m in _MLLOG.finditer(text):
        try:
            ev = json.loads(m.group(1))
        except json.JSONDecodeError:
            continue
        key, meta = ev.get("key"), ev.get("metadata") or {}
        if key == "global_batch_size" and isinstance(ev.get("value"), int):
            batch = ev["value"]
        n = meta.get("epoch_num")
        if key == "epoch_start" and n is not None:
            starts[int(n)] = ev["time_ms"] / 1000
        elif key == "epoch_stop" and n is not None and int(n) in starts:
            out.append((int(n), ev["time_ms"] / 1000 - starts[int(n)]))
    return [d for _, d in sorted(out)], batch


def main(repo_dir: str, header: bool = True) -> None:
    repo = Path(repo_dir)
    commit = _git(repo, "rev-parse", "HEAD").strip()
    remote = repo.parent.name.replace("+", "/")
    systems: dict[tuple[str, str], dict] = {}
    w = csv.writer(sys.stdout, lineterminator="\n")
    if header:
        w.writerow(["source", "benchmark", "submitter", "system", "gpu", "gpus", "run", "global_batch",
                    "epochs_timed", "median_epoch_s"])
    for path in _git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        m = _RESULT.match(path)
        if not m or m.group(3) not in BENCHMARKS:
            continue
        sub, system, bench, run = m.groups()
        if (sub, system) not in systems:
            try:
                systems[(sub, system)] = json.loads(_git(repo, "show", f"HEAD:{sub}/systems/{system}.json"))
            except (subprocess.CalledProcessError, json.JSONDecodeError):
                systems[(sub, system)] = {}
        desc = systems[(sub, system)]
        fam = gpu_family(str(desc.get("accelerator_model_name", "")))
        nodes = desc.get("number_of_nodes", desc.get("number of nodes"))
        per = desc.get("accelerators_per_node")
        if fam is None or nodes is None or per is None:
            continue
        try:
            epochs, batch = epoch_seconds(_git(repo, "show", f"HEAD:{path}"))
        except subprocess.CalledProcessError:  # listed but absent from the snapshot (a large file)
            continue
        if len(epochs) < 3:
            continue
        w.writerow([f"{remote}@{commit}:{path}", bench, sub, system, fam, int(nodes) * int(per), run, batch,
                    len(epochs) - 1, f"{statistics.median(epochs[1:]):.3f}"])


if __name__ == "__main__":
    for i, arg in enumerate(sys.argv[1:]):
        main(arg, header=i == 0)
