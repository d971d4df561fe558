"""Sweeps: a grid of replays (traces x policies x annotators x networks x clusters x seeds x loads x
policy options), each cell a Ray task (or a local process), results in one Parquet table that grows
as cells finish, so an interrupted sweep resumes where it stopped.

    from schedmate.sweep import SweepGrid, run_sweep
    grid = SweepGrid(traces=["synth:helios:300"], policies=["fifo", "sjf"], seeds=[0, 1])
    report = run_sweep(grid, "out/sweep", workers=2)      # Ray if installed, else a process pool
    df = report.table()                                     # one row per cell

CLI: `schedmate sweep GRID.yaml --out DIR` and `schedmate plot DIR --x load --y avg_jct_s --hue policy`.

An experiment moves onto the sweep by saying what it replays as grids: each workload a `TraceSource`
(a spec with the seed left to the cell, generator options such as `target_load`, a pinned cluster, a
window, `compress`, `static`); policies that read no annotation and those that do as two grids of one
sweep (`run_sweep([baselines, readers], dir)`); schedulers the registry does not name through
`scheduler_factory`; and what it measures beyond the replay summary through `collect` (scalars become
columns, lists of rows become side tables such as `by_size.parquet`). The report is then built from
`report.table()`, as `eval/main/run.py` does.
"""

from schedmate.sweep.cell import CellOutcome, run_cell
from schedmate.sweep.grid import (
           GridError,
           SweepCell,
           SweepGrid,
           TraceSource,
           load_grid,
           load_grids,
           sweep_cells,
)
from schedmate.sweep.runner import SweepReport, run_sweep
from schedmate.sweep.store import SweepStore, load_table

__all__ = ["CellOutcome", "GridError", "SweepCell", "SweepGrid", "SweepReport", "SweepStore", "TraceSource",
           "load_grid", "load_grids", "load_table", "run_cell", "run_sweep", "sweep_cells"]
