"""`schedmate plot` draws a sweep's table: lines over a numeric x, bars over a categorical one."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from schedmate.cli import app
from schedmate.sweep import SweepGrid, run_sweep
from schedmate.sweep.plot import PlotError, plot_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("plot")
    grid = SweepGrid(traces=["synth:helios:60:1"], policies=["fifo", "sjf"], loads=[0.5, 1.0, 2.0], seeds=[0, 1],
                     clusters=["32"])
    run_sweep(grid, out, backend="serial", progress=False)
    return out


def cli(*args: str):
    """`schedmate ...` in this process (typer's runner)."""
    return CliRunner().invoke(app, list(args))


def test_plot_writes_the_figure_named_on_the_command_line(sweep):
    out = sweep / "figs" / "jct.pdf"
    r = cli("plot", str(sweep), "--x", "load", "--y", "avg_jct_s", "--hue", "policy", "--out", str(out))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == str(out) and out.read_bytes()[:5] == b"%PDF-"
    r = cli("plot", str(sweep / "results.parquet"), "--x", "policy", "--y", "p99_jct_s", "--where", "load=2.0")
    assert r.exit_code == 0, r.stderr
    assert (sweep / "p99_jct_s_vs_policy.png").read_bytes()[:4] == b"\x89PNG"


def test_a_numeric_x_gives_one_line_per_hue_through_the_mean_over_seeds(sweep):
    df = pd.read_parquet(sweep / "results.parquet")
    ax = plot_sweep(df, x="load", y="avg_jct_s", hue="policy")
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"fifo", "sjf"}
    expected = df[df.policy == "sjf"].groupby("load").avg_jct_s.mean()
    assert list(lines["sjf"].get_xdata()) == [0.5, 1.0, 2.0]
    assert list(lines["sjf"].get_ydata()) == pytest.approx(list(expected))


def test_a_categorical_x_gives_grouped_bars_and_where_keeps_matching_cells(sweep):
    df = pd.read_parquet(sweep / "results.parquet")
    ax = plot_sweep(df, x="policy", y="makespan_s", hue="seed", where={"load": "1.0"})
    heights = sorted(round(b.get_height(), 6) for b in ax.patches)
    expected = sorted(round(v, 6) for v in df[df.load == 1.0].makespan_s)
    assert heights == expected and [t.get_text() for t in ax.get_xticklabels()] == ["fifo", "sjf"]


@pytest.mark.parametrize("args,message", [
    (["--x", "lod", "--y", "avg_jct_s"], "--x: unknown column 'lod'; available: cell, trace,"),
    (["--x", "load", "--y", "avg_jct_s", "--hue", "polcy"], "--hue: unknown column 'polcy'"),
    (["--x", "load", "--y", "policy"], "--y: column 'policy' is not numeric"),
    (["--x", "load", "--y", "avg_jct_s", "--where", "policy=lottery"], "no finished cell matches"),
    (["--x", "load", "--y", "avg_jct_s", "--agg", "mode"], "--agg: unknown 'mode'"),
])
def test_plot_refuses_what_the_table_cannot_give_and_lists_what_it_can(sweep, args, message):
    r = cli("plot", str(sweep), *args)
    assert r.exit_code == 2 and message in r.stderr, r.stderr


def test_plot_of_a_directory_that_is_no_sweep_says_so(tmp_path):
    r = cli("plot", str(tmp_path), "--x", "load", "--y", "avg_jct_s")
    assert r.exit_code == 2 and "not a sweep directory" in r.stderr
    with pytest.raises(PlotError, match="unknown column"):
        plot_sweep(pd.DataFrame({"a": [1]}), x="b", y="a")
