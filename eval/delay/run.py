"""Delay scheduling experiment: delay (fixed / tuned) vs consolidation vs scatter (and random), over seeds.

    .venv/bin/python -m eval.delay.run --out eval/delay/results            # about 8 minutes
    .venv/bin/python -m eval.delay.run --quick --out /tmp/delay            # smoke run, under a minute

Every policy but one uses the same queue order (`fifo-nb`: submission order, non-blocking), so only
the placement (and, for delay, its preemption, migration and tuner) differs. The exception is the
Tiresias-style consolidation baseline `consolidate-fifo`: strict FIFO (the head job waits for a packed
placement in one rack and holds the queue, no backfilling), as the Tiresias simulator's `fifo` schedule
with its per-switch `yarn` placement runs it. The baselines read no annotation, so they run once per
seed (annotator `none`) and stand for both annotators.

The workloads are in `workloads.py` (`WORKLOADS`), the main grid in `runner.py`, the tables and plots
in `report.py`, the side studies in `sweeps.py`.

Networks `ideal`, `congested:4`, `congested:8`; annotators `none` (sensitivity and duration unknown:
every job alike) and `oracle`. For every workload and seed, `makespan_floor_h` is a lower bound on
any scheduler's makespan (the latest arrival + consolidated duration, and the first arrival + all
GPU-time / cluster GPUs) and `jct_floor_h` one on its average JCT (the mean consolidated duration);
`*_floor_vs_<baseline>_pct` is thus the most any scheduler could cut from that baseline.

Outputs in `--out`: `raw.csv` (one row per replay), `results.csv` / `results.md` (means over seeds;
changes vs each consolidation baseline and comm. overhead vs scatter as the mean, min and max of the
per-seed changes), `targets.md` (the issue's targets against each consolidation baseline, with the
floors), `queue_by_size.csv`, `tuner_log.csv`, `<workload>_{none,oracle}.png`, the load sweep
(`load_sweep.csv`, `load_sweep_means.csv`, `sweep_*.png`), the starvation guard's sweep
(`guard_sweep.csv`, `guard_sweep_means.csv`), the ablation of delay's mechanisms (`ablation.csv`,
`ablation_means.csv`), the static trace under uplinks oversubscribed beyond the published setups
(`oversubscription.csv`, `oversubscription_means.csv`) and `semantic.csv` (delay driven by the
`schedmate` annotator).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from eval.delay.guard_study import guard_means, guard_sweep, tradeoff_plot, tuner_study
from eval.delay.report import report
from eval.delay.runner import run_all
from eval.delay.sweeps import ablation, load_sweep, oversubscription, semantic_rows
from eval.delay.workloads import SEEDS


def _read(path: Path) -> pd.DataFrame | None:
    return pd.read_csv(path) if path.exists() else None


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise typer.BadParameter(f"--seeds {text!r}: expected comma-separated integers, e.g. 0,1,2") from None
    if not seeds:
        raise typer.BadParameter("--seeds: give at least one seed")
    return seeds


def main(
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("eval/delay/results"),
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds; tables show means (and per-seed ranges).")]
    = ",".join(map(str, SEEDS)),
    quick: Annotated[bool, typer.Option(help="Small workloads, seed 0 only, no sweep or semantic rows.")] = False,
    report_only: Annotated[bool, typer.Option(
        help="Only re-render the tables and plots from OUT/raw.csv (and OUT/load_sweep.csv, ablation.csv, "
             "guard_sweep.csv).")] = False,
    sweep: Annotated[bool, typer.Option(help="Also run the load sweep (load_sweep.csv, sweep_*.png).")] = True,
    guard: Annotated[bool, typer.Option(
        help="Also sweep the starvation guard's rule on testbed64 (guard_sweep*.csv, guard_tradeoff.png), turn "
             "each delay mechanism off in turn (ablation*.csv), oversubscribe the uplinks beyond the published "
             "setups (oversubscription*.csv) and ask the tuner for the mean or the p99 (tuner_study*.csv); "
             "about 6 minutes on a quiet machine.")] = True,
    semantic: Annotated[bool, typer.Option(
        help="Also run delay with the schedmate annotator on testbed64 and distributed-4gpu (semantic.csv; "
             "about 2 minutes).")] = True,
) -> None:
    """Run the delay-scheduling comparison; write raw.csv, results.csv/.md, targets.md, plots, tuner_log.csv."""
    out.mkdir(parents=True, exist_ok=True)
    if report_only:
        report(pd.read_csv(out / "raw.csv"), out, _read(out / "load_sweep.csv"), _read(out / "ablation.csv"))
        guard_rows = _read(out / "guard_sweep.csv")
        if guard_rows is not None and "rule" in guard_rows:
            means = guard_means(guard_rows)
            means.to_csv(out / "guard_sweep_means.csv", index=False)
            tradeoff_plot(means, out)
        return
    seed_list = (0,) if quick else _seeds(seeds)
    t0 = time.perf_counter()
    raw, logs, sizes = run_all(seed_list, quick)
    raw.to_csv(out / "raw.csv", index=False)
    sizes.to_csv(out / "queue_by_size.csv", index=False)
    if len(logs):
        logs.to_csv(out / "tuner_log.csv", index=False)
    sweep_rows = load_sweep(out, seed_list) if sweep and not quick else None
    ablation_rows = None
    if guard and not quick:
        means = guard_sweep(out, seed_list)
        means.to_csv(out / "guard_sweep_means.csv", index=False)
        tradeoff_plot(means, out)
        ablation(out, seed_list).to_csv(out / "ablation_means.csv", index=False)
        ablation_rows = pd.read_csv(out / "ablation.csv")
        oversubscription(out, seed_list).to_csv(out / "oversubscription_means.csv", index=False)
        tuner_study(out, seed_list).to_csv(out / "tuner_study_means.csv", index=False)
    if semantic and not quick:
        semantic_rows(out)
    typer.echo(report(raw, out, sweep_rows, ablation_rows))
    typer.echo(f"wrote {out}/raw.csv, results.csv, results.md, targets.md, plots in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    typer.run(main)
