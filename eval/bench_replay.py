"""Replay-engine benchmark: wall and CPU time, peak memory and events/s (BENCHMARKS.md).

    .venv/bin/python -m eval.bench_replay --jobs 100000 --policies fifo tiresias
    .venv/bin/python -m eval.bench_replay --scaling 10000 100000 1000000 --policies fifo sjf
    .venv/bin/python -m eval.bench_replay --jobs 100000 --code /path/to/other/checkout   # before/after

Each run is a separate process so that peak RSS (ru_maxrss) belongs to that run alone. Per run:
`load_s` is trace generation (columns), `replay_s` / `replay_cpu_s` the wall / CPU time of `replay()`
(simulation and per-job results table), `sim_wall_s` the event loop alone, `process_cpu_s` the CPU time
of the whole process (imports, generation, replay) and `peak_rss_mb` its peak resident memory. CPU time
is the steadier figure when other work shares the machine.

`passes` counts scheduling passes, `passes_skipped` those of them the engine proved idle and skipped
(`passes_skipped_after_preemption` of those, the passes owed after a preemption), `passes_incremental` those
that tried only the jobs queued since the pass before (arrivals after an idle pass, non-blocking orders).

`--code DIR` runs the same benchmark with the code of another checkout (its own `eval/bench_replay.py
--one`), e.g. the engine before a change; rows are labelled with that checkout's commit.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

COLUMNS = ("code", "jobs", "policy", "load_s", "replay_s", "replay_cpu_s", "sim_wall_s", "process_cpu_s",
           "peak_rss_mb", "events", "avg_jct_s", "preemptions", "load_avg_1m")


def one(trace: str, policy: str, cluster: str, network: str, compress: float) -> dict:
    t0 = time.perf_counter()
    from schedmate.replay import replay
    from schedmate.traces import load_trace

    table = load_trace(trace).table
    if compress != 1.0:  # denser arrivals so that queues form (Venus-like load is ~0.56 on 1,024 GPUs)
        table = table.with_columns(submit_time=table.submit_time / compress)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    c1 = time.process_time()
    r = replay(table, policy=policy, cluster=cluster, network=network, annotator="none")
    total_s = time.perf_counter() - t1
    cpu_s = time.process_time() - c1
    usage = resource.getrusage(resource.RUSAGE_SELF)
    s = r.summary
    return {"trace": trace, "compress": compress, "policy": policy, "cluster": cluster, "network": network, "jobs": s.jobs,
            "load_s": round(load_s, 2), "sim_wall_s": round(s.wall_s, 2), "replay_total_s": round(total_s, 2),
            "replay_cpu_s": round(cpu_s, 2), "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "load_avg_1m": round(os.getloadavg()[0], 1),
            "events": s.events, "events_per_s": round(s.events_per_s), "peak_rss_mb": round(usage.ru_maxrss / 1024),
            "avg_jct_s": round(s.avg_jct_s), "avg_queue_s": round(s.avg_queue_s),
            "gpu_utilization": round(s.gpu_utilization, 3), "preemptions": s.preemptions,
            "passes": r.sim.passes, "passes_skipped": getattr(r.sim, "passes_skipped", None),
            "passes_skipped_after_preemption": getattr(r.sim, "passes_skipped_after_preemption", None),
            "passes_incremental": getattr(r.sim, "passes_incremental", None)}


def commit_of(code: Path) -> str:
    p = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                       check=False)
    dirty = subprocess.run(["git", "-C", str(code), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=False).stdout.strip()
    if p.returncode != 0:  # an exported tree (git archive): its directory names it
        return code.name
    return p.stdout.strip() + ("+changes" if dirty else "")


def run_one(code: Path, trace: str, policy: str, a: argparse.Namespace) -> dict:
    cmd = [sys.executable, "-m", "eval.bench_replay", "--one", trace, policy, "--cluster", a.cluster,
           "--network", a.network, "--compress", str(a.compress)]
    env = {**os.environ, "PYTHONPATH": str(code)}
    label = commit_of(code)  # the code as the run starts
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=code, env=env).stdout
    row = json.loads(out.strip().splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row.setdefault("process_cpu_s", round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2))
    row["process_wall_s"] = round(time.perf_counter() - t0, 2)
    row["replay_s"] = row.get("replay_total_s", row.get("sim_wall_s"))
    row["code"] = label
    return row


def markdown(rows: list[dict]) -> str:
    head = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"
    return head + "".join("| " + " | ".join(str(r.get(c, "")) for c in COLUMNS) + " |\n" for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--scaling", type=int, nargs="*", help="job counts for the scaling series")
    ap.add_argument("--policies", nargs="+", default=["fifo", "tiresias"])
    ap.add_argument("--kind", default="helios", help="synthetic trace kind (helios: Venus-like, 1,022 GPUs)")
    ap.add_argument("--cluster", default="1024")
    ap.add_argument("--network", default="congested")
    ap.add_argument("--compress", type=float, default=2.0, help="divide submit times by this (load ~1.1 at 2)")
    ap.add_argument("--code", type=Path, action="append",
                    help="checkout(s) whose code to run (repeatable; default: this one)")
    ap.add_argument("--one", nargs=2, metavar=("TRACE", "POLICY"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.cluster, a.network, a.compress)))
        return
    here = Path(__file__).resolve().parents[1]
    rows = []
    for n in a.scaling or [a.jobs]:
        for policy in a.policies:
            for code in a.code or [here]:
                row = run_one(code.resolve(), f"synth:{a.kind}:{n}", policy, a)
                print(json.dumps(row), flush=True)
                rows.append(row)
    print("\n" + markdown(rows))


if __name__ == "__main__":
    main()
