"""Score the code analyzer on the real-jobs corpus: per framework and per field, static vs +LLM vs +agent.

    python -m eval.realjobs.rebuild --mirror /work/.mirror        # once: sources -> $SCHEDMATE_HOME/realjobs
    python -m eval.realjobs.run --split test                      # static only
    python -m eval.realjobs.run --split test --modes static llm agent   # needs a served model

A field is right when the analyzer's value matches the label (params within 1.5x, the others exactly) or
when both are null. A number where the label is null counts as wrong (a wrong number is worse than null) and
is also counted apart (`wrong_numbers`), as is a null where the label has a value (`missed`).

The job is analysed from the source root with `cd <cwd> && <command>` (what a user submitting from the
repository root does); `--from workdir` analyses it from the directory the command runs in instead.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from eval.realjobs.corpus import CODE_FIELDS, CodeItem, load_code_items, split_of, warn_unbuilt
from eval.realjobs.rebuild import default_out

MODES = ("static", "llm", "agent")
PARAMS_TOLERANCE = 1.5


def field_right(field: str, got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    if got is None:
        return False
    try:
        g, w = float(got), float(want)
    except (TypeError, ValueError):
        return False
    if not (math.isfinite(g) and g > 0):
        return False
    if field == "params":
        return max(g, w) / min(g, w) <= PARAMS_TOLERANCE
    return abs(g - w) < 1e-9 * max(1.0, abs(w))


def load_index(cache: Path) -> dict[str, dict[str, Any]]:
    p = cache / "code" / "index.jsonl"
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found: build the corpus first (python -m eval.realjobs.rebuild)")
    return {r["id"]: r for r in map(json.loads, p.read_text().splitlines()) if r}


def job_of(entry: dict[str, Any], start: str) -> tuple[Path, str]:
    """(directory to analyse, command) for one built item."""
    cwd = entry.get("cwd") or "."
    if start == "workdir" or cwd in {".", ""}:
        return Path(entry["workdir"] if start == "workdir" else entry["root"]), entry["command"]
    return Path(entry["root"]), f"cd {cwd} && {entry['command']}"


def analyse(mode: str, workdir: Path, command: str, env: dict[str, str],
            candidates: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """(values of the six fields, run info: seconds, llm calls, error, warnings)."""
    from schedmate.codeprof.analyzer import analyze_code

    t0 = time.perf_counter()
    info: dict[str, Any] = {"error": None, "llm_calls": 0, "warnings": []}
    try:
        if mode == "agent":
            from schedmate.codeprof.agent import analyze_with_agent  # type: ignore[import-not-found]

            prof = analyze_with_agent(workdir, command=command, env=env)
        else:
            prof = analyze_code(workdir, command=command, env=env, use_llm=(mode == "llm"), candidates=candidates)
        values = {f: prof.value(f) for f in CODE_FIELDS}
        info["llm_calls"] = prof.llm_calls
        info["warnings"] = list(prof.warnings)
    except Exception as e:  # noqa: BLE001 - one bad job must not stop the evaluation; the error is reported
        values = dict.fromkeys(CODE_FIELDS)
        info["error"] = f"{type(e).__name__}: {e}"
    info["seconds"] = time.perf_counter() - t0
    return values, info


def evaluate(
    items: Iterable[CodeItem], index: dict[str, dict[str, Any]], modes: Iterable[str], start: str = "root",
    progress: bool = True, candidates: bool = True,
) -> pd.DataFrame:
    """One row per (item, mode, field)."""
    from rich.progress import Progress

    items = [it for it in items if it.id in index]
    modes = list(modes)
    rows: list[dict[str, Any]] = []
    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("real jobs", total=len(items) * len(modes))
        for it in items:
            entry = index[it.id]
            workdir, command = job_of(entry, start)
            for mode in modes:
                got, info = analyse(mode, workdir, command, dict(entry.get("env") or {}), candidates)
                for f in CODE_FIELDS:
                    want = it.labels.get(f)
                    rows.append({"id": it.id, "repo": it.origin.key, "framework": it.framework, "domain": it.domain,
                                 "mode": mode, "field": f, "label": want, "got": got[f],
                                 "right": field_right(f, got[f], want),
                                 "wrong_number": want is not None and got[f] is not None
                                 and not field_right(f, got[f], want) or (want is None and got[f] is not None),
                                 "missed": want is not None and got[f] is None,
                                 "seconds": info["seconds"], "llm_calls": info["llm_calls"], "error": info["error"]})
                bar.advance(task)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    if df.empty:
        return {}
    per_job = df.groupby(["mode", "id"]).agg(seconds=("seconds", "first"), llm_calls=("llm_calls", "first"),
                                            error=("error", "first")).reset_index()
    overall = df.groupby("mode").agg(fields_right=("right", "mean"), wrong_numbers=("wrong_number", "sum"),
                                     missed=("missed", "sum"), jobs=("id", "nunique"))
    overall["s_per_job"] = per_job.groupby("mode")["seconds"].mean()
    overall["llm_calls_per_job"] = per_job.groupby("mode")["llm_calls"].mean()
    overall["errors"] = per_job.groupby("mode")["error"].apply(lambda s: int(s.notna().sum()))
    by_field = df.pivot_table(index="field", columns="mode", values="right", aggfunc="mean").reindex(CODE_FIELDS)
    by_framework = df.pivot_table(index="framework", columns="mode", values="right", aggfunc="mean")
    by_framework["jobs"] = df.groupby("framework")["id"].nunique()
    return {"overall": overall, "by_field": by_field, "by_framework": by_framework}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test", "all"), default="test")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=["static"])
    ap.add_argument("--from", dest="start", choices=("root", "workdir"), default="root")
    ap.add_argument("--cache", type=Path, default=default_out(), help="the rebuilt corpus (rebuild.py --out)")
    ap.add_argument("--only", help="analyse only item ids containing this text")
    ap.add_argument("--sample", type=int, default=0,
                    help="score only every k-th item (by id) so the LLM modes fit a time budget; 0 = all")
    ap.add_argument("--out", type=Path, help="write the per-field rows here (CSV)")
    ap.add_argument("--no-candidates", action="store_true",
                    help="analyse without the candidate pass (fields still null are not filled from named numbers)")
    ap.add_argument("--show-wrong", action="store_true", help="list the wrong fields (dev split only)")
    a = ap.parse_args(argv)
    index = load_index(a.cache)
    items = load_code_items(None if a.split == "all" else a.split)
    if a.only:
        items = [it for it in items if a.only in it.id]
    if a.sample > 1:
        items = sorted(items, key=lambda it: it.id)[:: a.sample]
    warn_unbuilt([it.id for it in items], index, "launch setups")
    df = evaluate(items, index, a.modes, a.start, candidates=not a.no_candidates)
    if df.empty:
        print("no items to score", file=sys.stderr)
        return 1
    pd.set_option("display.width", 160)
    for name, table in summary(df).items():
        print(f"\n## {name} ({a.split} split, {df['id'].nunique()} jobs)\n")
        print(table.round(3).to_string())
    if a.show_wrong:
        wrong = df[~df["right"]]
        wrong = wrong[[split_of(r) == "dev" for r in wrong["repo"]]]  # never read test mistakes while tuning
        print(wrong[["id", "mode", "field", "label", "got", "error"]].to_string())
    if a.out:
        df.to_csv(a.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
