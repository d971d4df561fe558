"""Log monitor benchmark: accuracy on the labelled dataset and rule-path throughput.

    python eval/bench_logmon.py                 # rules only (no LLM server needed)
    python eval/bench_logmon.py --llm           # also the LLM path (needs `schedmate llm serve`)
    python eval/bench_logmon.py --profile       # cProfile of the throughput run

Throughput: the healthy and benign logs of the dataset concatenated (repeated to at least --lines lines) are
fed to one Monitor in 1 MiB chunks, no LLM, after a warm-up pass; lines/s = lines / seconds of the best of
--repeat runs, both wall and CPU time of the process (one core: the monitor is single-threaded; on a shared
machine wall time also counts other processes, so the load average is printed beside it).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schedmate.logmon.evaluate import evaluate_logs, summarize
from schedmate.logmon.monitor import Monitor
from schedmate.logmon.store import RuleStore

DATASET = ROOT / "eval" / "datasets" / "logs"


def corpus(min_lines: int, dataset: Path = DATASET) -> bytes:
    """Logs of the dataset (healthy and benign ones, so the run is not cut short semantically), repeated."""
    files = sorted(p for p in dataset.glob("*.log") if "healthy" in p.name or "benign" in p.name)
    blob = b"".join(p.read_bytes() for p in files)
    n = blob.count(b"\n")
    reps = max(1, -(-min_lines // max(1, n)))
    return blob * reps


def throughput(data: bytes, repeat: int = 3, profile: bool = False) -> tuple[float, int, float]:
    """(lines per wall second, lines, lines per CPU second of this process), best of `repeat` runs. The CPU
    figure is the one to compare on a shared machine: wall time also counts other people's processes."""
    best = float("inf")
    best_cpu = float("inf")
    lines = data.count(b"\n")
    with tempfile.TemporaryDirectory() as tmp:
        store = RuleStore(Path(tmp) / "r.sqlite")
        for i in range(repeat + 1):
            mon = Monitor(store=store)
            t0 = time.perf_counter()
            c0 = time.process_time()
            if profile and i == repeat:
                import cProfile
                import pstats

                pr = cProfile.Profile()
                pr.enable()
            for k in range(0, len(data), 1 << 20):
                mon.feed_bytes(data[k:k + (1 << 20)])
            mon.finish()
            dt = time.perf_counter() - t0
            dc = time.process_time() - c0
            if profile and i == repeat:
                pr.disable()
                pstats.Stats(pr).sort_stats("tottime").print_stats(15)
            if i > 0:
                best = min(best, dt)
                best_cpu = min(best_cpu, dc)
    return lines / best, lines, lines / best_cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llm", action="store_true")
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--dataset", default=str(DATASET))
    args = ap.parse_args()
    out: dict[str, object] = {}
    df = evaluate_logs(args.dataset, use_llm=False)
    out["rules"] = summarize(df)
    if args.llm:
        t0 = time.perf_counter()
        dfl = evaluate_logs(args.dataset, use_llm=True)
        out["llm"] = summarize(dfl)
        out["llm"]["seconds"] = round(time.perf_counter() - t0, 1)  # type: ignore[index]
        wrong = dfl[(dfl["category"] != dfl["pred_category"]) | (dfl["failed"] != dfl["pred_failed"])]
        out["llm_wrong"] = wrong[["file", "category", "pred_category"]].to_dict("records")
    lps, lines, lpcpu = throughput(corpus(args.lines, Path(args.dataset)), args.repeat, args.profile)
    import os

    out["throughput"] = {"lines": lines, "lines_per_wall_s": round(lps), "lines_per_cpu_s": round(lpcpu),
                         "load_average_1min": round(os.getloadavg()[0], 2)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
