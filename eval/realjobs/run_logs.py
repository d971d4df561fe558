"""Score the log monitor on the real-jobs log corpus: category+failed, step counters, iteration time.

    python -m eval.realjobs.rebuild --only logs         # once: excerpts/files -> $SCHEDMATE_HOME/realjobs/logs
    python -m eval.realjobs.run_logs --split test       # rules only
    python -m eval.realjobs.run_logs --split test --llm # rules + the served model for lines no rule knows

Scores per log: `category_failed` (category and failed both right), `steps` (current and total step both
as labelled, null when labelled null), `iteration_time` (within 20 % of the label; null must stay null).
Reported overall and per print format (`framework`), with LLM calls and seconds per log.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from eval.realjobs.corpus import LogItem, load_log_items, split_of, warn_unbuilt
from eval.realjobs.rebuild import default_out

ITERATION_TOLERANCE = 0.20


def load_log_index(cache: Path) -> dict[str, str]:
    p = cache / "logs" / "index.jsonl"
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found: build the log corpus first (python -m eval.realjobs.rebuild --only logs)")
    return {r["id"]: r["path"] for r in map(json.loads, p.read_text().splitlines()) if r}


def _same_number(got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    return got is not None and abs(float(got) - float(want)) < 1e-6 * max(1.0, abs(float(want)))


def _within(got: Any, want: Any, tol: float = ITERATION_TOLERANCE) -> bool:
    if want is None:
        return got is None
    return got is not None and want > 0 and abs(float(got) - float(want)) <= tol * float(want)


def monitor_log(path: str, use_llm: bool, state_dir: Path | None = None) -> tuple[Any, dict[str, Any]]:
    from schedmate.logmon.cli import make_monitor

    t0 = time.perf_counter()
    mon = make_monitor(path, use_llm=use_llm, state_dir=state_dir)
    mon.feed_bytes(Path(path).read_bytes())
    report = mon.finish()
    return report, {"seconds": time.perf_counter() - t0, "llm_calls": report.llm_calls}


def evaluate_logs(split: str | None = "test", use_llm: bool = False, cache: Path | None = None,
                  items: list[LogItem] | None = None) -> pd.DataFrame:
    """One row per log item with what the monitor said, the labels and the three scores. The monitor starts
    with no learned rules and an empty failure memory (a directory of this run's own): with `use_llm` it
    learns as it goes, in the items' order, and nothing a user's `$SCHEDMATE_HOME` learned scores here."""
    with tempfile.TemporaryDirectory(prefix="schedmate-run-logs-") as state:
        return _evaluate_logs(split, use_llm, cache, items, Path(state))


def _evaluate_logs(split: str | None, use_llm: bool, cache: Path | None, items: list[LogItem] | None,
                   state_dir: Path) -> pd.DataFrame:
    index = load_log_index(cache or default_out())
    chosen = items if items is not None else load_log_items(None if split in (None, "all") else split)
    rows: list[dict[str, Any]] = []
    warn_unbuilt([it.id for it in chosen], index, "logs",
                 "run rebuild.py; issue excerpts need `rebuild recover-excerpt`")
    for it in chosen:
        if it.id not in index:
            continue
        report, info = monitor_log(index[it.id], use_llm, state_dir)
        lab, f, p = it.labels, report.failure, report.progress
        rows.append({
            "id": it.id, "source": it.source.key, "framework": it.framework,
            "category": lab["category"], "got_category": f.category.value, "failed": lab["failed"],
            "got_failed": f.failed,
            "current_step": lab["current_step"], "got_current_step": p.current_step,
            "total_steps": lab["total_steps"], "got_total_steps": p.total_steps,
            "iteration_time_s": lab["iteration_time_s"], "got_iteration_time_s": p.iteration_time_s,
            "category_failed": f.category.value == lab["category"] and f.failed == lab["failed"],
            "steps": _same_number(p.current_step, lab["current_step"])
            and _same_number(p.total_steps, lab["total_steps"]),
            "iteration_time": _within(p.iteration_time_s, lab["iteration_time_s"]),
            **info,
        })
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> dict[str, Any]:
    if df.empty:
        return {"logs": 0}
    return {"logs": len(df), "category_failed": round(float(df["category_failed"].mean()), 3),
            "steps": round(float(df["steps"].mean()), 3), "iteration_time": round(float(df["iteration_time"].mean()), 3),
            "llm_calls_per_log": round(float(df["llm_calls"].mean()), 2),
            "s_per_log": round(float(df["seconds"].mean()), 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test", "all"), default="test")
    ap.add_argument("--llm", action="store_true", help="let the monitor ask the served model")
    ap.add_argument("--cache", type=Path, default=default_out())
    ap.add_argument("--show-wrong", action="store_true", help="list wrong logs (dev split only)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    df = evaluate_logs(a.split, use_llm=a.llm, cache=a.cache)
    if df.empty:
        print("no built log items in this split", file=sys.stderr)
        return 1
    print(json.dumps(summarize(df)))
    per = df.groupby("framework")[["category_failed", "steps", "iteration_time"]].mean().round(3)
    per["logs"] = df.groupby("framework")["id"].count()
    print(per.to_string())
    if a.show_wrong:
        dev = df[[split_of(s) == "dev" for s in df["source"]]]  # never read test mistakes while tuning
        bad = dev[~(dev["category_failed"] & dev["steps"] & dev["iteration_time"])]
        cols = ["id", "category", "got_category", "current_step", "got_current_step", "total_steps", "got_total_steps",
                "iteration_time_s", "got_iteration_time_s"]
        print(bad[cols].to_string())
    if a.out:
        df.to_csv(a.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
