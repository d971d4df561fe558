"""Scoring the log monitor on a labelled dataset (`eval/datasets/logs/labels.jsonl`).

`evaluate_logs(dataset_dir, use_llm)` runs the monitor on every labelled log and returns one row per log;
`summarize(df)` gives the headline metrics:

- `category_macro_f1`: macro-F1 over the categories present in labels or predictions (`none` included),
- `failed_accuracy`,
- `step_exact` / `total_exact`: current step and total steps equal to the label, over logs whose label has them,
- `iter_within_20pct`: iteration time within 20 % of the true mean, over logs whose label has one,
- `detection_latency_lines_mean/max`: predicted onset minus labelled onset, over failed logs detected with the
  right category (0 = the onset line itself; negative = early),
- `onset_exact`: share of correctly categorised failures whose onset line is exact,
- `llm_calls_per_1k_lines_cold`: LLM calls (requests that reached the server; cache hits excluded) per 1,000
  lines over the single in-order pass, learning included;
- `llm_calls_per_1k_lines_after_warmup`: the same on the odd-numbered logs after the even-numbered ones warmed
  a fresh rule store and failure memory (held out: none of those logs was seen before).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from sklearn.metrics import f1_score

from schedmate.logmon.monitor import analyze_file
from schedmate.logmon.store import RuleStore


def load_labels(dataset_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(dataset_dir) / "labels.jsonl"
    labels = []
    with open(path) as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                labels.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{i}: not JSON: {e}") from e
    return labels


def _run(dataset_dir: Path, labels: list[dict[str, Any]], use_llm: bool, store: RuleStore,
         assistant_factory: Any, memory: Any) -> list[dict[str, Any]]:
    rows = []
    for lab in labels:
        path = dataset_dir / lab["file"]
        assistant = assistant_factory() if use_llm else None
        t0 = time.perf_counter()
        rep = analyze_file(str(path), store=store, assistant=assistant, memory=memory)
        dt = time.perf_counter() - t0
        p, f = rep.progress, rep.failure
        it_true = lab.get("iteration_time_s")
        rows.append({
            "file": lab["file"], "framework": lab.get("framework"), "scenario": lab.get("scenario"),
            "lines": rep.lines,
            "category": lab["category"], "pred_category": f.category.value,
            "failed": bool(lab["failed"]), "pred_failed": f.failed,
            "onset_line": lab.get("onset_line"), "pred_onset_line": f.onset_line,
            "current_step": lab.get("current_step"), "pred_current_step": p.current_step,
            "total_steps": lab.get("total_steps"), "pred_total_steps": p.total_steps,
            "iteration_time_s": it_true, "pred_iteration_time_s": p.iteration_time_s,
            "llm_calls": rep.llm_calls, "rules_matched": rep.rules_matched, "unmatched": rep.unmatched_lines,
            "remaining_time_s": rep.remaining_time_s, "seconds": dt,
        })
    return rows


def evaluate_logs(dataset_dir: str | Path, use_llm: bool, *, warmup: bool = True,
                  home: str | Path | None = None) -> pd.DataFrame:
    """One row per labelled log, from one pass over the dataset in file order on a fresh rule store (and, with
    `use_llm`, a fresh failure memory under `home`, default a temporary directory): rules learned from one log
    serve the later ones, as on a cluster.

    With `use_llm` and `warmup`, a second experiment measures the steady state: on another fresh store and
    memory, the even-numbered logs are run first (warm-up), then the odd-numbered ones, whose LLM calls per
    1,000 lines go to `df.attrs["llm_calls_per_1k_lines_after_warmup"]` (with `..._heldout_lines` and
    `..._heldout_calls`). Without an LLM server the LLM run falls back to rules (see each report's warnings).
    """
    dataset_dir = Path(dataset_dir)
    labels = load_labels(dataset_dir)
    factory = None
    if use_llm:
        from schedmate.logmon.assist import make_assistant, make_memory

        factory = make_assistant
    attrs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="logmon-eval-") as tmp:
        root = Path(home) if home is not None else Path(tmp)
        store = RuleStore(root / "cold" / "logrules.sqlite")
        memory = make_memory(root / "cold" / "failures") if use_llm else None
        rows = _run(dataset_dir, labels, use_llm, store, factory, memory)
        store.close()
        if use_llm and warmup:
            store = RuleStore(root / "warm" / "logrules.sqlite")
            memory = make_memory(root / "warm" / "failures")
            _run(dataset_dir, labels[0::2], use_llm, store, factory, memory)
            held = _run(dataset_dir, labels[1::2], use_llm, store, factory, memory)
            store.close()
            lines = sum(r["lines"] for r in held)
            calls = sum(r["llm_calls"] for r in held)
            attrs = {"llm_calls_per_1k_lines_after_warmup": round(1000.0 * calls / max(1, lines), 4),
                     "llm_calls_heldout_calls": calls, "llm_calls_heldout_lines": lines}
    df = pd.DataFrame(rows)
    df.attrs.update(attrs)
    return df


def _eq(a: Any, b: Any) -> bool:
    if a is None or b is None or (isinstance(a, float) and pd.isna(a)) or (isinstance(b, float) and pd.isna(b)):
        return False
    return int(a) == int(b)


def summarize(df: pd.DataFrame) -> dict[str, float | int | None]:
    out: dict[str, float | int | None] = {"logs": len(df), "lines": int(df["lines"].sum())}
    cats = sorted(set(df["category"]) | set(df["pred_category"]))
    out["category_macro_f1"] = round(float(f1_score(df["category"], df["pred_category"], labels=cats,
                                                    average="macro", zero_division=0)), 4)
    out["category_accuracy"] = round(float((df["category"] == df["pred_category"]).mean()), 4)
    out["failed_accuracy"] = round(float((df["failed"] == df["pred_failed"]).mean()), 4)
    has_step = df[df["current_step"].notna()]
    out["step_exact"] = round(float(sum(_eq(a, b) for a, b in zip(has_step["current_step"],
                                                                  has_step["pred_current_step"])) / max(1, len(has_step))), 4)
    has_total = df[df["total_steps"].notna() & df["current_step"].notna()]
    out["total_exact"] = round(float(sum(_eq(a, b) for a, b in zip(has_total["total_steps"],
                                                                   has_total["pred_total_steps"])) / max(1, len(has_total))), 4)
    has_it = df[df["iteration_time_s"].notna()]
    within = [
        (p is not None and not pd.isna(p) and abs(p - t) <= 0.2 * t)
        for t, p in zip(has_it["iteration_time_s"], has_it["pred_iteration_time_s"])
    ]
    out["iter_within_20pct"] = round(float(sum(within) / max(1, len(within))), 4)
    det = df[df["failed"] & (df["category"] == df["pred_category"]) & df["onset_line"].notna()
             & df["pred_onset_line"].notna()]
    lat = (det["pred_onset_line"].astype(float) - det["onset_line"].astype(float))
    out["detection_latency_lines_mean"] = round(float(lat.mean()), 3) if len(lat) else None
    out["detection_latency_lines_max"] = float(lat.max()) if len(lat) else None
    out["onset_exact"] = round(float((lat == 0).mean()), 4) if len(lat) else None
    calls = int(df["llm_calls"].sum())
    out["llm_calls"] = calls
    out["llm_calls_per_1k_lines_cold"] = round(1000.0 * calls / max(1, out["lines"]), 4)  # type: ignore[operator]
    out["llm_calls_per_1k_lines_after_warmup"] = df.attrs.get("llm_calls_per_1k_lines_after_warmup",
                                                              out["llm_calls_per_1k_lines_cold"])
    for k in ("llm_calls_heldout_calls", "llm_calls_heldout_lines"):
        if k in df.attrs:
            out[k] = df.attrs[k]
    out["analysis_seconds"] = round(float(df["seconds"].sum()), 3)
    return out


def main() -> None:  # pragma: no cover - convenience
    import sys

    d = sys.argv[1] if len(sys.argv) > 1 else "eval/datasets/logs"
    use_llm = "--llm" in sys.argv
    df = evaluate_logs(d, use_llm=use_llm)
    print(json.dumps(summarize(df), indent=2))
    bad = df[(df["category"] != df["pred_category"]) | (df["failed"] != df["pred_failed"])]
    if len(bad):
        print(bad[["file", "category", "pred_category", "onset_line", "pred_onset_line"]].to_string())
    os.sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover
    main()
