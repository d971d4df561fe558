"""targets.md's first section: delay against `consolidate-rack` (the simplest policy it contains), mean
and p99 JCT, on every workload and load, and the issue's bar (mean at most 1.05x, p99 at least 30 %
lower) on the cases it names. The p99 floor is the most any scheduler could cut from the baseline's p99
(every JCT is at least the job's consolidated duration)."""

from __future__ import annotations

import pandas as pd

from eval.delay.workloads import CONGESTED

TARGET_MEAN_PCT, TARGET_P99_PCT = 5.0, -30.0


def _pct(v: float) -> str:
    return "" if pd.isna(v) else f"{v:+.1f}"


def _pair(none: pd.Series | None, oracle: pd.Series | None, col: str) -> str:
    return f"{_pct(none[col]) if none is not None else ''} / {_pct(oracle[col]) if oracle is not None else ''}"


def _by_annotator(rows: pd.DataFrame, keys: list[str]) -> list[tuple[tuple, pd.Series | None, pd.Series | None]]:
    out = []
    for key, g in rows.groupby(keys, sort=False):
        by = {r.annotator: r for _, r in g.iterrows()}
        out.append((key if isinstance(key, tuple) else (key,), by.get("none"), by.get("oracle")))
    return out


def _main_rows(agg: pd.DataFrame) -> list[str]:
    d = agg[(agg.policy == "delay") & agg.network.isin(CONGESTED)]
    lines = []
    for (wname, net), none, oracle in _by_annotator(d, ["workload", "network"]):
        ref = none if none is not None else oracle
        lines.append(f"| {wname} | {net} | {ref.offered_load:.2f} | {_pair(none, oracle, 'avg_jct_vs_consolidate_rack_pct')} "
                     f"| {_pair(none, oracle, 'p99_jct_vs_consolidate_rack_pct')} "
                     f"| {_pct(ref.get('p99_floor_vs_consolidate_rack_pct', float('nan')))} |")
    return lines


def _sweep_rows(table: pd.DataFrame) -> list[str]:
    d = table[table.policy == "delay"]
    lines = []
    for (wname, net, _), none, oracle in _by_annotator(d, ["workload", "network", "level"]):
        ref = none if none is not None else oracle
        lines.append(f"| {wname} (load sweep) | {net} | {ref.offered_load:.2f} "
                     f"| {_pair(none, oracle, 'avg_jct_vs_consolidate_rack_pct')} "
                     f"| {_pair(none, oracle, 'p99_jct_vs_consolidate_rack_pct')} "
                     f"| {_pct(ref.get('p99_floor_vs_consolidate_rack_pct', float('nan')))} |")
    return lines


def ablation_vs_rack(ablation: pd.DataFrame, variant: str = "delay") -> pd.DataFrame:
    """Per ablation case and annotator: the variant's mean / p99 JCT / p99 floor as a change from
    `consolidate-rack` on the same seed, in %, means over seeds."""
    base = ablation[ablation.variant == "consolidate-rack"][["case", "seed", "avg_jct_h", "p99_jct_h"]]
    rows = ablation[ablation.variant == variant].merge(base, on=["case", "seed"], suffixes=("", "_rack"))
    rows["avg_jct_vs_consolidate_rack_pct"] = 100 * (rows.avg_jct_h / rows.avg_jct_h_rack - 1)
    rows["p99_jct_vs_consolidate_rack_pct"] = 100 * (rows.p99_jct_h / rows.p99_jct_h_rack - 1)
    rows["p99_floor_vs_consolidate_rack_pct"] = (100 * (rows.p99_floor_h / rows.p99_jct_h_rack - 1)
                                                 if "p99_floor_h" in rows else float("nan"))
    cols = ["avg_jct_vs_consolidate_rack_pct", "p99_jct_vs_consolidate_rack_pct", "p99_floor_vs_consolidate_rack_pct"]
    return rows.groupby(["case", "network", "annotator"], sort=False)[cols].mean().reset_index()


def _verdict(mean: float, p99: float, floor: float) -> str:
    if mean <= TARGET_MEAN_PCT and p99 <= TARGET_P99_PCT:
        return "met"
    why = []
    if mean > TARGET_MEAN_PCT:
        why.append("mean")
    if p99 > TARGET_P99_PCT:
        why.append("p99" + (f" (no scheduler can: floor {floor:+.1f} %)" if not pd.isna(floor) and floor > TARGET_P99_PCT
                            else ""))
    return "not met: " + ", ".join(why)


def rack_section(agg: pd.DataFrame, sweep_table: pd.DataFrame | None, ablation: pd.DataFrame | None) -> str:
    head = ["## delay vs consolidate-rack, mean and p99, every workload and load", "",
            ("Delay (fixed timers, defaults) against `consolidate-rack`, `none` / `oracle`, change in %, means of the "
            "per-seed changes. p99 floor: the most any scheduler could cut from `consolidate-rack`'s p99."), "",
            "| workload | network | offered load | avg JCT % | p99 JCT % | p99 floor % |", "|---|---|---:|---:|---:|---:|"]
    lines = head + _main_rows(agg)
    if sweep_table is not None and "p99_jct_vs_consolidate_rack_pct" in sweep_table:
        lines += _sweep_rows(sweep_table)
    abl = ablation_vs_rack(ablation) if ablation is not None else None
    if abl is not None:
        for (case, net), none, oracle in _by_annotator(abl, ["case", "network"]):
            ref = none if none is not None else oracle
            lines.append(f"| {case} (ablation) | {net} | | {_pair(none, oracle, 'avg_jct_vs_consolidate_rack_pct')} "
                         f"| {_pair(none, oracle, 'p99_jct_vs_consolidate_rack_pct')} "
                         f"| {_pct(ref['p99_floor_vs_consolidate_rack_pct'])} |")
    lines += ["", (f"The bar (issue 16): mean JCT at most {1 + TARGET_MEAN_PCT / 100:.2f}x `consolidate-rack` and p99 at "
              f"least {-TARGET_P99_PCT:.0f} % lower, with the CLI defaults."), "",
              "| case | annotator | avg JCT % | p99 JCT % | p99 floor % | verdict |", "|---|---|---:|---:|---:|---|"]
    cases: list[tuple[str, pd.Series]] = []
    main = agg[(agg.policy == "delay") & (agg.workload == "testbed64") & (agg.network == "congested:8")]
    cases += [("testbed64, congested:8, load 0.9", r) for _, r in main.iterrows()]
    if sweep_table is not None and "p99_jct_vs_consolidate_rack_pct" in sweep_table:
        s = sweep_table[(sweep_table.policy == "delay") & (sweep_table.workload == "testbed64")
                        & (sweep_table.network == "congested:8") & (sweep_table.level == 1.5)]
        cases += [("testbed64, congested:8, load 1.5", r) for _, r in s.iterrows()]
    if abl is not None:
        cases += [(f"{r.case}, {r.network}", r) for _, r in abl[abl.case.str.startswith("philly-cluster")].iterrows()]
    for name, r in cases:
        mean, p99 = r["avg_jct_vs_consolidate_rack_pct"], r["p99_jct_vs_consolidate_rack_pct"]
        floor = r.get("p99_floor_vs_consolidate_rack_pct", float("nan"))
        lines.append(f"| {name} | {r.annotator} | {mean:+.1f} | {p99:+.1f} | {_pct(floor)} | {_verdict(mean, p99, floor)} |")
    return "\n".join(lines) + "\n"


__all__ = ["ablation_vs_rack", "rack_section"]
