"""Measure the augmentation: speed, code-analyzer agreement, log-monitor agreement on replayed logs.

    .venv/bin/python -m schedmate.semantic.measure --out /tmp/semantic-measure [--jobs 500]

Prints one JSON object. Uses synthetic traces (no shared data needed), a 64-GPU congested cluster and
Tiresias (preemptions, so restarted attempts are in the logs).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import Counter
from pathlib import Path

from schedmate.annotators.builtin import NoAnnotator
from schedmate.policies import build_scheduler
from schedmate.records import ClusterSpec, NetworkSpec
from schedmate.semantic.augment import augment
from schedmate.semantic.check import check_code, check_log
from schedmate.semantic.logs import SemanticLogAnnotator
from schedmate.sim.engine import ReplayConfig, Simulator
from schedmate.traces import load_trace


def _timed_augment(spec: str, root: Path, write: bool) -> tuple[float, int]:
    jobs = load_trace(spec).jobs
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    augment(jobs, root, seed=1, write=write)
    return time.perf_counter() - t0, len(jobs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=500, help="jobs per trace kind for the agreement runs")
    args = ap.parse_args()
    out: dict = {"speed_s": {}, "code": {}, "logs": {}}
    for n in (500, 10000):
        for write in (True, False):
            s, _ = _timed_augment(f"synth:philly:{n}:1", args.out / f"speed{n}", write)
            out["speed_s"][f"{n}_{'eager' if write else 'lazy'}"] = round(s, 2)
        shutil.rmtree(args.out / f"speed{n}", ignore_errors=True)
    for kind in ("philly", "helios", "acme"):
        root = args.out / kind
        shutil.rmtree(root, ignore_errors=True)
        jobs = load_trace(f"synth:{kind}:{args.jobs}:2", max_gpus=32, target_load=1.5, cluster_gpus=64).jobs
        aj = augment(jobs, root, seed=3)
        code = [check_code(j) for j in aj]
        out["code"][kind] = {"jobs": len(code), "all_fields_right": sum(a.all_ok for a in code),
                             "wrong": Counter(k for a in code for k, ok in a.ok.items() if not ok)}
        sim = Simulator(aj, ClusterSpec.uniform(8, 8, network=NetworkSpec.parse("congested")),
                        build_scheduler("tiresias"), SemanticLogAnnotator(NoAnnotator(), monitor_interval_s=120.0),
                        ReplayConfig()).run()
        tally, right = Counter(), Counter()
        misses: list = []
        for js in sim.jobs:
            speed = js.job.duration_s / js.executed_s if js.executed_s > 0 else 1.0
            a = check_log(js.job, mean_speed=speed)
            for k, ok in a.ok.items():
                tally[k] += 1
                right[k] += ok
                if not ok and len(misses) < 6:
                    misses.append((a.job_id, a.template, k, a.fields[k]))
        out["logs"][kind] = {"jobs": len(sim.jobs), "preemptions": sum(js.preemptions for js in sim.jobs),
                             "agreement": {k: f"{right[k]}/{tally[k]}" for k in sorted(tally)},
                             "examples_of_misses": misses}
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
