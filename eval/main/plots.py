"""Plots of the main table: one figure per trace, one panel per metric, policies x annotators.

    .venv/bin/python -m eval.main.plots eval/main/results_nollm [eval/main/results_accuracy]

`eval.main.run` calls `plot_table` on its own output; this entry point redraws from an existing
results.csv (and, when given, the accuracy directory's accuracy.csv / predictions.csv) without
replaying anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from eval.plotting import save_figure
from schedmate.sweep.plot import plot_sweep

METRICS = (
    ("avg_jct_h", "average JCT (h)"),
    ("p99_jct_h", "p99 JCT (h)"),
    ("avg_queue_h", "average queueing delay (h)"),
    ("failed_gpu_h", "failed GPU-hours"),
)
# The order of the bars inside a policy group: metadata only, published-style predictors, ours, perfect.
ANNOTATOR_ORDER = ("none", "requested", "lastk", "helios", "lucid", "history", "schedmate", "oracle")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_table(results: Path, out: Path | None = None) -> list[Path]:
    """One PNG per trace from `results` (a results.csv of `eval.main.run`); returns the files written.
    Each panel is `schedmate.sweep.plot.plot_sweep` (x policy, hue annotator), as `schedmate plot` draws it."""
    plt = _pyplot()
    df = pd.read_csv(results)
    out = out or results.parent
    written = []
    for trace, part in df.groupby("trace", sort=False):
        fig, axes = plt.subplots(1, len(METRICS), figsize=(4.2 * len(METRICS), 3.8))
        for ax, (col, label) in zip(axes, METRICS, strict=True):
            plot_sweep(part, x="policy", y=col, hue="annotator", kind="bar", ax=ax, hue_order=ANNOTATOR_ORDER,
                       styles={"schedmate": {"hatch": "//"}},
                       logy=col != "failed_gpu_h" and bool((part[col] > 0).all()))
            ax.set_title(label, fontsize=9)
            ax.set_xlabel("")
            ax.set_ylabel("")
            if ax is not axes[0]:
                ax.get_legend().remove()
        axes[0].legend(fontsize=7, ncol=2)
        written.append(save_figure(fig, f"{trace}: what each annotator is worth to each policy",
                                   out / f"main_{trace}.png", fontsize=10))
    return written


def plot_accuracy(directory: Path) -> list[Path]:
    """Error-ratio CDFs (predicted / actual run time) at submission and at 25 % progress, per trace."""
    preds = directory / "predictions.csv"
    if not preds.exists():
        return []
    plt = _pyplot()
    df = pd.read_csv(preds)
    traces = list(dict.fromkeys(df["trace"]))
    fig, axes = plt.subplots(1, len(traces), figsize=(4.2 * len(traces), 3.6), squeeze=False)
    for ax, trace in zip(axes[0], traces, strict=True):
        part = df[df.trace == trace]
        for col, label in (("at_submission", "at submission"), ("at_25pct", "at 25% progress")):
            ratio = (part[col] / part["actual_run_s"]).dropna().to_numpy()
            if len(ratio) == 0:
                continue
            r = np.sort(np.clip(ratio, 1e-2, 1e2))
            ax.plot(r, np.arange(1, len(r) + 1) / len(part), label=label)
        for bound in (0.5, 1.5):
            ax.axvline(bound, color="grey", linestyle=":", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("predicted / actual run time")
        ax.set_ylabel("share of jobs")
        ax.set_title(trace, fontsize=9)
        ax.legend(fontsize=7)
    return [save_figure(fig, "predicted / actual run time, by when the prediction was made",
                        directory / "accuracy_cdf.png", fontsize=10)]


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    written = plot_table(Path(sys.argv[1]) / "results.csv")
    if len(sys.argv) > 2:
        written += plot_accuracy(Path(sys.argv[2]))
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
