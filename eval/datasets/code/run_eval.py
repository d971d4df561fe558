"""Run the code-analyzer evaluation in one or more modes and write the side-by-side report.

Usage: python eval/datasets/code/run_eval.py --modes static combined llm --out out/code_eval
       [--prompt-version V] [--model M] [--jobs a b ...]
Rows of every run are appended to OUT/rows_<mode>_<version>_<model>.csv so runs can be merged later.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from schedmate.codeprof.evaluate import evaluate_code, load_labels, write_report

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", nargs="+", default=["static"])
    ap.add_argument("--out", default="out/code_eval")
    ap.add_argument("--prompt-version", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--jobs", nargs="*", default=None)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = a.jobs or [d["job"] for d in load_labels(HERE)]
    for mode in a.modes:
        path = out / f"rows_{mode}_{a.prompt_version or 'current'}_{a.model or 'default'}.csv"
        done = set(pd.read_csv(path)["job"]) if path.exists() else set()
        for job in jobs:  # one job at a time, appended: an interrupted run keeps what it measured
            if job in done:
                continue
            df = evaluate_code(HERE, mode, prompt_version=a.prompt_version, model=a.model, jobs=[job])
            df.to_csv(path, mode="a", header=not path.exists(), index=False)
            print(
                mode,
                job,
                f"{df['job_seconds'].iloc[0]:.1f}s",
                f"right {df['correct'].sum()}/{len(df)}",
                flush=True,
            )
        df = pd.read_csv(path)
        print(mode, "accuracy", round(df["correct"].mean(), 3), flush=True)
    frames = [pd.read_csv(p) for p in sorted(out.glob("rows_*.csv"))]
    print(write_report(pd.concat(frames, ignore_index=True), out))


if __name__ == "__main__":
    main()
