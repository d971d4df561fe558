"""The sweep driver: expand the grid, skip finished cells, run the rest on a backend, store each outcome
as it arrives, consolidate the table.

    from schedmate.sweep import SweepGrid, run_sweep
    report = run_sweep(SweepGrid(traces=["synth:helios:300"], policies=["fifo", "sjf"]), "out/sweep", workers=2)
    df = report.table()

Resume: a cell whose row part exists is finished and never rerun; a failed cell is rerun only with
`retry_failed`. LLM cells (`SweepCell.uses_llm`) share one LLM server: at most `llm_workers` of them
(default 1) are in flight at once, while other cells fill the remaining workers.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from schedmate.sweep.backends import make_backend
from schedmate.sweep.grid import SweepCell, SweepGrid, sweep_cells
from schedmate.sweep.store import SweepStore, load_table

POLL_S = 0.5


class SweepReport(BaseModel):
    """What a sweep did (also printed by `schedmate sweep`)."""

    directory: Path
    results: Path
    backend: str
    cells: int
    already_done: int
    skipped_failed: int
    ran: int
    ok: int
    failed: int
    interrupted: bool = False
    still_failed: int = 0
    """Cells of the grid whose last run failed (this run's failures and those not retried)."""
    wall_s: float
    errors: dict[str, str] = {}
    """key -> error of the cells that failed in this run."""

    def table(self) -> pd.DataFrame:
        return load_table(self.results)


def _progress(enabled: bool) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("[red]{task.fields[failed]} failed"), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), disable=not enabled, transient=False)


def llm_server_known() -> bool:
    """Whether a `schedmate` annotator left to decide (`use_llm` unset) would call an LLM: a server named in
    the environment or one that `schedmate llm serve` runs (the annotator's own rule). When none is,
    such cells make no LLM call and need no LLM slot."""
    import os

    from schedmate.llm import serving

    return bool(os.environ.get("SCHEDMATE_LLM_BASE_URL")) or serving.running_server() is not None


def _next_cell(pending: deque[SweepCell], llm_busy: int, llm_workers: int) -> SweepCell | None:
    """The first pending cell that may start now (an LLM cell only while an LLM slot is free)."""
    for i, cell in enumerate(pending):
        if not cell.uses_llm or llm_busy < llm_workers:
            del pending[i]
            return cell
    return None


def run_sweep(grid: SweepGrid | Sequence[SweepGrid], directory: str | Path, workers: int = 2, backend: str = "auto",
              address: str | None = None, retry_failed: bool = False, llm_workers: int = 1,
              progress: bool | None = None) -> SweepReport:
    """Run every cell of `grid` (or of several grids, one table) not finished in `directory`; returns the
    report (table in `report.results`).
    `backend`: auto | ray | pool | serial (see `schedmate.sweep.backends`). `progress`: a rich bar
    (default: when stderr is a terminal). Ctrl-C stops the sweep, keeping what finished."""
    grids = [grid] if isinstance(grid, SweepGrid) else list(grid)
    for g in grids:
        g.check()
    if llm_workers < 1:
        raise ValueError(f"llm_workers: must be at least 1, got {llm_workers}")
    cells = sweep_cells(grids)
    store = SweepStore(Path(directory)).open_for_writing()
    t0 = time.perf_counter()
    try:
        store.save_grids(grids)
        done, failed_before = store.finished(), store.failed()
        todo = [c for c in cells if c.key not in done and (retry_failed or c.key not in failed_before)]
        report = SweepReport(directory=store.root, results=store.root / "results.parquet", backend="none",
                             cells=len(cells), already_done=sum(c.key in done for c in cells),
                             skipped_failed=sum(c.key in failed_before and c.key not in done for c in cells)
                             if not retry_failed else 0, ran=0, ok=0, failed=0, wall_s=0.0)
        if todo:
            report = _run(todo, store, report, workers, backend, address, llm_workers,
                          sys.stderr.isatty() if progress is None else progress)
        store.consolidate(cells)
        failed_now = store.failed()
        still = sum(c.key in failed_now for c in cells)
    finally:
        store.close()
    return report.model_copy(update={"wall_s": time.perf_counter() - t0, "still_failed": still})


def plan(grid: SweepGrid | Sequence[SweepGrid], directory: str | Path) -> tuple[list[SweepCell], set[str], dict[str, str]]:
    """(cells, keys finished in `directory`, key -> error of failed ones), without running anything."""
    grids = [grid] if isinstance(grid, SweepGrid) else list(grid)
    for g in grids:
        g.check()
    store = SweepStore(Path(directory))
    return sweep_cells(grids), store.finished(), store.failed()


def _run(todo: list[SweepCell], store: SweepStore, report: SweepReport, workers: int, backend: str,
         address: str | None, llm_workers: int, show: bool) -> SweepReport:
    workers = min(workers, len(todo))
    runner = make_backend(backend, workers, address)
    report = report.model_copy(update={"backend": runner.description})
    pending = deque(todo)
    llm_cells = [c for c in todo if c.uses_llm]
    if llm_cells and all("use_llm" not in c.annotator_options for c in llm_cells) and not llm_server_known():
        llm_workers = workers  # no server to share: those cells read code and logs without the LLM
    inflight: dict[Any, SweepCell] = {}
    ok = failed = 0
    errors: dict[str, str] = {}
    interrupted = False
    label = f"sweep ({report.already_done} of {report.cells} cells already done)" if report.already_done else "sweep"
    try:
        with _progress(show) as bar:
            task = bar.add_task(label, total=len(todo), failed=0)
            while pending or inflight:
                while len(inflight) < workers:
                    cell = _next_cell(pending, sum(c.uses_llm for c in inflight.values()), llm_workers)
                    if cell is None:
                        break
                    inflight[runner.submit(cell)] = cell
                for handle, outcome in runner.wait(list(inflight), timeout=POLL_S):
                    inflight.pop(handle)
                    store.record(outcome)
                    if outcome.status == "ok":
                        ok += 1
                    else:
                        failed += 1
                        errors[outcome.key] = outcome.error or ""
                    bar.update(task, advance=1, failed=failed)
    except KeyboardInterrupt:
        interrupted = True
        print(f"interrupted: {ok + failed} cell(s) stored; run the same command again to resume", file=sys.stderr)
    finally:
        runner.close()
    return report.model_copy(update={"ran": ok + failed, "ok": ok, "failed": failed, "errors": errors,
                                     "interrupted": interrupted})
