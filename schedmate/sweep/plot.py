"""Figures from a sweep table: `--y` against `--x`, one series per `--hue` value.

    from schedmate.sweep.plot import plot_sweep, save
    ax = plot_sweep(load_table("out/sweep"), x="load", y="avg_jct_s", hue="policy")

A numeric x gives lines (the mean over the rows that share x and hue, e.g. seeds, with a band from
their min to their max); a categorical x gives grouped bars (with min-max whiskers). Only cells that
finished (`status == ok`) are drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

Kind = Literal["auto", "line", "bar"]
AGGREGATES = ("mean", "median", "min", "max")


class PlotError(ValueError):
    """A column or option the table cannot give; the message lists what it can."""


def _need(df: pd.DataFrame, column: str, role: str) -> None:
    if column not in df.columns:
        raise PlotError(f"{role}: unknown column {column!r}; available: {', '.join(map(str, df.columns))}")


def select(df: pd.DataFrame, where: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Finished cells matching every `column=value` of `where` (values compared as text: `seed=1`)."""
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    for col, value in (where or {}).items():
        _need(df, col, "--where")
        df = df[df[col].astype(str) == str(value)]
    if df.empty:
        raise PlotError(f"no finished cell matches {dict(where or {})}")
    return df


def _order(values: pd.Series, given: Sequence[Any] | None) -> list[Any]:
    seen = list(dict.fromkeys(values))
    if not given:
        return seen
    return [v for v in given if v in seen] + [v for v in seen if v not in given]


def plot_sweep(df: pd.DataFrame, x: str, y: str, hue: str | None = None, where: Mapping[str, str] | None = None,
               kind: Kind = "auto", agg: str = "mean", ax: Any = None, order: Sequence[Any] | None = None,
               hue_order: Sequence[Any] | None = None, styles: Mapping[Any, dict[str, Any]] | None = None,
               logy: bool = False) -> Any:
    """Draw `y` against `x` on `ax` (a new figure when None); returns the axes. `styles`: extra keyword
    arguments for one hue value's bars or line (e.g. `{"schedmate": {"hatch": "//"}}`)."""
    for col, role in ((x, "--x"), (y, "--y")) + (((hue, "--hue"),) if hue else ()):
        _need(df, col, role)
    if agg not in AGGREGATES:
        raise PlotError(f"--agg: unknown {agg!r} (known: {', '.join(AGGREGATES)})")
    df = select(df, where)
    if not pd.api.types.is_numeric_dtype(df[y]):
        raise PlotError(f"--y: column {y!r} is not numeric ({df[y].dtype})")
    if kind == "auto":
        kind = "line" if pd.api.types.is_numeric_dtype(df[x]) and not pd.api.types.is_bool_dtype(df[x]) else "bar"
    if ax is None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 4.0))
    groups = [(h, df[df[hue] == h]) for h in _order(df[hue], hue_order)] if hue else [(None, df)]
    xs = _order(df[x], order)
    if kind == "line":
        xs = sorted(xs)
    width = 0.8 / max(1, len(groups))
    for i, (h, part) in enumerate(groups):
        g = part.groupby(x, sort=False)[y]
        stats = pd.DataFrame({"center": g.agg(agg), "min": g.min(), "max": g.max()}).reindex(xs)
        style = dict((styles or {}).get(h, {}))
        label = None if h is None else str(h)
        if kind == "line":
            ok = stats["center"].notna().to_numpy()
            xv = np.asarray(xs, dtype=float)[ok]
            (line,) = ax.plot(xv, stats["center"].to_numpy()[ok], marker="o", label=label, **style)
            if (stats["max"] > stats["min"]).any():
                ax.fill_between(xv, stats["min"].to_numpy()[ok], stats["max"].to_numpy()[ok], alpha=0.15,
                                color=line.get_color())
        else:
            pos = np.arange(len(xs)) + (i - (len(groups) - 1) / 2) * width
            spread = np.vstack([stats["center"] - stats["min"], stats["max"] - stats["center"]]).clip(min=0)
            style.setdefault("edgecolor", "black")
            style.setdefault("linewidth", 0.3)
            ax.bar(pos, stats["center"].to_numpy(), width, label=label,
                   yerr=spread if np.nan_to_num(spread).any() else None, capsize=2, **style)
    if kind == "bar":
        ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs], rotation=30)
    ax.set_xlabel(x)
    ax.set_ylabel(y if agg == "mean" else f"{y} ({agg})")
    if logy:
        ax.set_yscale("log")
    if hue:
        ax.legend(title=hue, fontsize=7)
    return ax


def save(ax: Any, path: Path, title: str | None = None) -> Path:
    """Write the figure of `ax` (format from the suffix: .png, .pdf, .svg) and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
