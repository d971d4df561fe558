"""Replay-engine benchmark: wall time, peak memory and events/s (BENCHMARKS.md).

    .venv/bin/python -m eval.bench_replay --jobs 100000 --policies fifo tiresias
    .venv/bin/python -m eval.bench_replay --scaling 10000 100000 1000000 --policies fifo

Each run is a separate process so that peak RSS (ru_maxrss) belongs to that run alone. The wall time
reported is the simulation loop (`sim_wall_s`); trace generation is reported apart (`load_s`), and
`replay_cpu_s` is the CPU time of the replay (steadier than wall time when the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time


def one(trace: str, policy: str, cluster: str, network: str, compress: float) -> dict:
    from schedmate.replay import replay

    t0 = time.perf_counter()
    from schedmate.traces import load_trace

    jobs = load_trace(trace).jobs
    if compress != 1.0:  # denser arrivals so that queues form (Venus-like load is ~0.56 on 1,024 GPUs)
        jobs = [j.model_copy(update={"submit_time": j.submit_time / compress}) for j in jobs]
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    c1 = time.process_time()
    r = replay(jobs, policy=policy, cluster=cluster, network=network, annotator="none")
    total_s = time.perf_counter() - t1
    cpu_s = time.process_time() - c1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    s = r.summary
    return {"trace": trace, "compress": compress, "policy": policy, "cluster": cluster, "network": network, "jobs": s.jobs,
            "load_s": round(load_s, 2), "sim_wall_s": round(s.wall_s, 2), "replay_total_s": round(total_s, 2),
            "replay_cpu_s": round(cpu_s, 2), "load_avg_1m": round(os.getloadavg()[0], 1),
            "events": s.events, "events_per_s": round(s.events_per_s), "peak_rss_mb": round(peak_mb),
            "avg_jct_s": round(s.avg_jct_s), "avg_queue_s": round(s.avg_queue_s),
            "gpu_utilization": round(s.gpu_utilization, 3), "preemptions": s.preemptions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--scaling", type=int, nargs="*", help="job counts for the scaling series")
    ap.add_argument("--policies", nargs="+", default=["fifo", "tiresias"])
    ap.add_argument("--kind", default="helios", help="synthetic trace kind (helios: Venus-like, 1,022 GPUs)")
    ap.add_argument("--cluster", default="1024")
    ap.add_argument("--network", default="congested")
    ap.add_argument("--compress", type=float, default=2.0, help="divide submit times by this (load ~1.1 at 2)")
    ap.add_argument("--one", nargs=2, metavar=("TRACE", "POLICY"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.cluster, a.network, a.compress)))
        return
    sizes = a.scaling or [a.jobs]
    for n in sizes:
        for policy in a.policies:
            cmd = [sys.executable, "-m", "eval.bench_replay", "--one", f"synth:{a.kind}:{n}", policy,
                   "--cluster", a.cluster, "--network", a.network, "--compress", str(a.compress)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            print(out.strip(), flush=True)


if __name__ == "__main__":
    main()
