"""The delay experiment's tables and plots: changes vs each consolidation baseline, targets, load sweep."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from eval.delay.workloads import (
    ANNOTATORS,
    BASELINES,
    CONGESTED,
    NETWORKS,
    POLICIES,
    TARGET_COMM_PCT,
    TARGET_JCT_PCT,
    TARGET_MAKESPAN_PCT,
    TARGET_TUNER_SHARE,
    WORKLOADS,
)
from eval.plotting import save_figure


def _expand_both(df: pd.DataFrame) -> pd.DataFrame:
    """Baseline rows (annotator `both`) stand for both annotators in comparisons."""
    both = df[df.annotator == "both"]
    return pd.concat([df[df.annotator != "both"], *[both.assign(annotator=a) for a in ANNOTATORS]],
                     ignore_index=True)


def vs_baselines(df: pd.DataFrame, keys: list[str], metrics: list[str],
                 floors: tuple[tuple[str, str], ...] = ()) -> pd.DataFrame:
    """`df` with, for each consolidation baseline (`BASELINES`, its rows in `df` matched on `keys`), the
    change of every metric `<m>_h` as `<m>_vs_<tag>_pct`, and of every (floor column, metric) pair in
    `floors` as `<floor>_vs_<tag>_pct` (the most any scheduler could cut from the baseline), in %."""
    out = df
    for base_policy, tag in BASELINES:
        base = df[df.policy == base_policy][keys + metrics].rename(columns={m: f"{m}_base" for m in metrics})
        out = out.merge(base, on=keys)
        for m in metrics:
            out[f"{m[:-2]}_vs_{tag}_pct"] = 100 * (out[m] / out[f"{m}_base"] - 1)
        for floor, m in floors:
            out[f"{floor[:-2]}_vs_{tag}_pct"] = 100 * (out[floor] / out[f"{m}_base"] - 1)
        out = out.drop(columns=[f"{m}_base" for m in metrics])
    return out


def relative(raw: pd.DataFrame) -> pd.DataFrame:
    """Per seed: each row's change vs each consolidation baseline (makespan, average and p99 JCT) and its
    comm. overhead vs scatter, in %; the floors as the most any scheduler could cut from each baseline."""
    df = _expand_both(raw)
    keys = ["workload", "seed", "network", "annotator"]
    floors = (("makespan_floor_h", "makespan_h"), ("jct_floor_h", "avg_jct_h"))
    if "p99_floor_h" in df:  # results before session 5 have no p99 floor
        floors += (("p99_floor_h", "p99_jct_h"),)
    out = vs_baselines(df, keys, ["makespan_h", "avg_jct_h", "p99_jct_h"], floors)
    scat = df[df.policy == "scatter"][keys + ["comm_overhead_gpu_h"]].rename(columns={"comm_overhead_gpu_h": "scat"})
    out = out.merge(scat, on=keys)
    out["comm_vs_scatter_pct"] = 100 * (out["comm_overhead_gpu_h"] / out["scat"].where(out["scat"] > 0) - 1)
    return out.drop(columns=["scat"])


def aggregate(rel: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds; for the % columns also the min and max over seeds; the tuner's share of the
    replay wall time as total tuner time / total replay time over the seeds."""
    keys = ["workload", "cluster", "network", "annotator", "policy"]
    pct = [c for c in rel.columns if c.endswith("_pct")]
    num = [c for c in rel.columns if c not in keys + ["seed"] and pd.api.types.is_numeric_dtype(rel[c])]
    g = rel.groupby(keys, sort=False)
    out = g[num].mean()
    out["seeds"] = g.size()
    for c in pct:
        out[f"{c}_min"] = g[c].min()
        out[f"{c}_max"] = g[c].max()
    out["tuner_share"] = g["tuner_s"].sum() / g["wall_s"].sum()
    out = out.reset_index()
    rank = {
        "workload": {w.name: i for i, w in enumerate(WORKLOADS)}, "network": {n: i for i, n in enumerate(NETWORKS)},
        "policy": {p: i for i, p in enumerate(POLICIES)}, "annotator": {a: i for i, a in enumerate(ANNOTATORS)},
    }
    order = out[list(rank)].apply(lambda col: col.map(rank[col.name]).fillna(len(rank[col.name])))
    return out.loc[order.sort_values(list(rank)).index].reset_index(drop=True)


def _fmt_h(v: float) -> str:
    return f"{v:,.1f}" if v >= 10 else f"{v:.2f}"


def _fmt_pct(row: pd.Series, col: str, spread: bool = False) -> str:
    v = row[col]
    if pd.isna(v):
        return ""
    text = f"{v:+.1f}"
    if spread and row.get("seeds", 1) > 1:
        text += f" [{row[col + '_min']:+.0f}, {row[col + '_max']:+.0f}]"
    return text


def markdown(agg: pd.DataFrame, networks: tuple[str, ...] = NETWORKS) -> str:
    """The results table (means over seeds; [min, max] of the per-seed changes for delay)."""
    cols = ["workload", "network", "annotator", "policy", "makespan h", "avg JCT h", "p99 JCT h", "avg queue h",
            "GPU util", "comm GPU-h", "preempt.", "moves", "makespan % fifo", "avg JCT % fifo", "makespan % cons",
            "avg JCT % cons", "avg JCT % rack", "comm % scatter", "tuner share"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * 4 + "---:|" * (len(cols) - 4)]
    for _, r in agg[agg.network.isin(networks)].iterrows():
        spread = r.policy.startswith("delay")
        if r.annotator == "oracle" and not spread:
            continue  # baselines: one row, annotator "both"
        cells = [r.workload, r.network, "both" if not spread else r.annotator, r.policy, _fmt_h(r.makespan_h),
                 _fmt_h(r.avg_jct_h), _fmt_h(r.p99_jct_h), _fmt_h(r.avg_queue_h), f"{r.gpu_util:.2f}",
                 f"{r.comm_overhead_gpu_h:,.0f}", f"{r.preemptions:.0f}", f"{r.migrations:.0f}",
                 _fmt_pct(r, "makespan_vs_consolidate_fifo_pct", spread), _fmt_pct(r, "avg_jct_vs_consolidate_fifo_pct", spread),
                 _fmt_pct(r, "makespan_vs_consolidate_pct", spread), _fmt_pct(r, "avg_jct_vs_consolidate_pct", spread),
                 _fmt_pct(r, "avg_jct_vs_consolidate_rack_pct", spread), _fmt_pct(r, "comm_vs_scatter_pct"),
                 f"{100 * r.tuner_share:.1f}%" if r.policy == "delay-tuned" else ""]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def headline(agg: pd.DataFrame) -> str:
    """One row per workload x congested network: delay's change (annotator `none` / `oracle`, means over
    seeds) of makespan and average JCT vs each consolidation baseline, with the floor (the most any
    scheduler could cut) in brackets, and its comm. overhead vs scatter."""
    d = agg[(agg.policy == "delay") & agg.network.isin(CONGESTED)].set_index(["workload", "network", "annotator"])
    head = ["workload", "network", "offered load"]
    for _, tag in BASELINES:
        head += [f"makespan % {tag.replace('_', '-')}", f"avg JCT % {tag.replace('_', '-')}"]
    head.append("comm % scatter")
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for (wname, net), _ in d.groupby(level=[0, 1], sort=False):
        none, oracle = d.loc[(wname, net, "none")], d.loc[(wname, net, "oracle")]
        cells = [wname, net, f"{none.offered_load:.2f}"]
        for _, tag in BASELINES:
            for m, floor in (("makespan", "makespan_floor"), ("avg_jct", "jct_floor")):
                cells.append(f"{none[f'{m}_vs_{tag}_pct']:+.1f} / {oracle[f'{m}_vs_{tag}_pct']:+.1f} "
                             f"({none[f'{floor}_vs_{tag}_pct']:+.0f})")
        cells.append(f"{none.comm_vs_scatter_pct:+.1f} / {oracle.comm_vs_scatter_pct:+.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def targets(agg: pd.DataFrame) -> str:
    """The issue's targets under congestion, per workload x network x annotator, against each
    consolidation baseline: delay's (fixed timers) makespan and average-JCT change, the most any
    scheduler could cut (floors), and whether both targets are met on that row."""
    lines = [
        ("Delay (fixed timers) vs each consolidation baseline, `none` / `oracle`, means over seeds; in brackets "
        "the floor: the most any scheduler could cut from that baseline."),
        "",
        headline(agg),
        (f"Targets: makespan <= {TARGET_MAKESPAN_PCT:+.0f} % and average JCT <= {TARGET_JCT_PCT:+.0f} % vs "
        f"consolidation-based scheduling under congestion; comm. overhead <= {TARGET_COMM_PCT:+.0f} % vs scatter; "
        f"tuner share <= {100 * TARGET_TUNER_SHARE:.0f} %. Means over seeds; `floor` = the most any scheduler "
        "could cut from that baseline (makespan / average-JCT lower bounds). Both = both targets met on the row."),
        "",
        ("| workload | network | annotator | baseline | delay makespan % | floor % | delay avg JCT % | floor % "
        "| both | comm % scatter | tuner share |"),
        "|---|---|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    delay = agg[(agg.policy == "delay") & agg.network.isin(CONGESTED)]
    tuned = agg[(agg.policy == "delay-tuned")].set_index(["workload", "network", "annotator"])["tuner_share"]
    for _, r in delay.iterrows():
        share = tuned.get((r.workload, r.network, r.annotator), float("nan"))
        for base, tag in BASELINES:
            mk, jct = r[f"makespan_vs_{tag}_pct"], r[f"avg_jct_vs_{tag}_pct"]
            both = mk <= TARGET_MAKESPAN_PCT and jct <= TARGET_JCT_PCT
            lines.append(
                f"| {r.workload} | {r.network} | {r.annotator} | {base} | {mk:+.1f} | "
                f"{r[f'makespan_floor_vs_{tag}_pct']:+.1f} | {jct:+.1f} | {r[f'jct_floor_vs_{tag}_pct']:+.1f} | "
                f"{'yes' if both else 'no'} | {r.comm_vs_scatter_pct:+.1f} | {100 * share:.1f}% |")
    summary = []
    for base, tag in BASELINES:
        mk_best = delay[f"makespan_vs_{tag}_pct"].min()
        jct_best = delay[f"avg_jct_vs_{tag}_pct"].min()
        floor_best = delay[f"makespan_floor_vs_{tag}_pct"].min()
        met = delay[(delay[f"makespan_vs_{tag}_pct"] <= TARGET_MAKESPAN_PCT)
                    & (delay[f"avg_jct_vs_{tag}_pct"] <= TARGET_JCT_PCT)]
        summary.append(f"* vs `{base}`: best makespan {mk_best:+.1f} % (best floor {floor_best:+.1f} %), best "
                       f"average JCT {jct_best:+.1f} %; rows meeting both: {len(met)} of {len(delay)}.")
    comm_worst = delay["comm_vs_scatter_pct"].max()
    share_worst = agg[agg.policy == "delay-tuned"]["tuner_share"].max()
    summary.append(f"* comm. overhead vs scatter, worst congested row: {comm_worst:+.1f} %; tuner share, worst row: "
                   f"{100 * share_worst:.1f} %.")
    return "\n".join(lines) + "\n\n" + "\n".join(summary) + "\n"


def plots(agg: pd.DataFrame, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    written = []
    metrics = [("makespan_h", "makespan (h)"), ("avg_jct_h", "average JCT (h)"), ("p99_jct_h", "p99 JCT (h)"),
               ("comm_overhead_gpu_h", "comm. overhead (GPU-h)")]
    for (wname, ann), g in agg.groupby(["workload", "annotator"]):
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
        x = np.arange(len(NETWORKS))
        width = 0.8 / len(POLICIES)
        for ax, (m, label) in zip(axes, metrics):
            for k, pol in enumerate(POLICIES):
                vals = [g[(g.network == n) & (g.policy == pol)][m].iloc[0] for n in NETWORKS]
                ax.bar(x + (k - (len(POLICIES) - 1) / 2) * width, vals, width, label=pol)
            ax.set_xticks(x, NETWORKS)
            ax.set_title(label)
            ax.set_yscale("symlog" if m == "comm_overhead_gpu_h" else "log")
        axes[0].legend(fontsize=7)
        written.append(save_figure(
            fig, f"{wname} / annotator {ann} / {g.cluster.iloc[0]} / mean of {int(g.seeds.iloc[0])} seeds",
            out / f"{wname}_{ann}.png"))
    return written


def sweep_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds per (workload, network, load level, annotator, policy), with delay's change vs
    each consolidation baseline (mean of the per-seed changes)."""
    has_p99 = "p99_floor_h" in sweep
    out = vs_baselines(_expand_both(sweep), ["workload", "network", "level", "seed", "annotator"],
                       ["makespan_h", "avg_jct_h", *(["p99_jct_h"] if has_p99 else [])],
                       (("p99_floor_h", "p99_jct_h"),) if has_p99 else ())
    agg_keys = ["workload", "network", "level", "annotator", "policy"]
    num = [c for c in out.columns if c not in [*agg_keys, "seed"] and pd.api.types.is_numeric_dtype(out[c])]
    return out.groupby(agg_keys, sort=False)[num].mean().reset_index()


def sweep_plots(table: pd.DataFrame, out: Path) -> list[Path]:
    """Per (workload, network): average JCT and makespan against offered load, one line per policy and
    annotator (`sweep_<workload>_<network>.png`); means over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for (wname, net), g in table.groupby(["workload", "network"]):
        if g["offered_load"].nunique() < 2:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        for (pol, ann), line in g.groupby(["policy", "annotator"]):
            if pol != "delay" and ann == "oracle":
                continue  # the baselines read no annotation: one line each
            line = line.sort_values("offered_load")
            label = f"{pol} ({ann})" if pol == "delay" else pol
            style = "-o" if pol == "delay" else "--."
            axes[0].plot(line["offered_load"], line["avg_jct_h"], style, label=label)
            axes[1].plot(line["offered_load"], line["makespan_h"], style, label=label)
        axes[0].set(xlabel="offered load", ylabel="average JCT (h)", yscale="log")
        axes[1].set(xlabel="offered load", ylabel="makespan (h)")
        axes[0].legend(fontsize=7)
        written.append(save_figure(fig, f"{wname} / {net}: load sweep (mean over seeds)",
                                   out / f"sweep_{wname}_{net.replace(':', '')}.png"))
    return written


def report(raw: pd.DataFrame, out: Path, sweep: pd.DataFrame | None = None, ablation: pd.DataFrame | None = None
           ) -> str:
    """results.csv / results.md / targets.md and the plots from the replays' rows (and, when given, the
    load sweep's and the ablation's rows for targets.md's comparison with `consolidate-rack`); returns
    targets.md."""
    from eval.delay.rack_report import rack_section

    agg = aggregate(relative(raw))
    agg.to_csv(out / "results.csv", index=False)
    (out / "results.md").write_text(markdown(agg))
    table = None
    if sweep is not None:
        table = sweep_table(sweep)
        table.to_csv(out / "load_sweep_means.csv", index=False)
        sweep_plots(table, out)
    text = rack_section(agg, table, ablation) + "\n" + targets(agg)
    (out / "targets.md").write_text(text)
    plots(agg, out)
    return text

