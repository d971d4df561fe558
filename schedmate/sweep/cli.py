"""`schedmate sweep` and `schedmate plot`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

SWEEP_HELP = """Replay a grid of cells (traces x policies x annotators x networks x clusters x seeds x loads x policy options), each cell a Ray task, into one Parquet table.

Example: `schedmate sweep eval/main/grid.yaml --out runs/main --workers 2`, or without a file:
`schedmate sweep --trace synth:helios:600 --policy fifo --policy sjf --seed 0 --seed 1 --load 0.5 --load 1 --out runs/s`.

GRID is a YAML file of axes (see `eval/main/grid.yaml`): `traces` (specs as `schedmate replay --trace`
takes them, or mappings with `spec`, `name`, `options`, `min_gpus`, `skip`, `take`, `compress`, `static`,
`cluster`, `monitor_interval_s`), `policies`, `placements`, `annotators`, `annotator_options` (annotator ->
factory arguments), `networks`, `clusters`, `seeds`, `loads` (arrival-rate factors), `policy_options` (a
list of option dicts, or policy -> list), `semantic`, `semantic_noise`, `monitor_interval_s`, `limit`.
Several grids make one sweep and one table as a list under `grids:`, each over the file's other keys.
Axis options on the command line replace the file's axis.

Cells run on a local Ray instance (`--workers` CPUs, no dashboard), on an existing Ray cluster with
`--address`, or, without Ray installed (`pip install 'schedmate[sweep]'`), in a local process pool.
Each finished cell is written at once as `OUT/parts/<cell>.parquet` (atomic rename), so running the same
command again after an interruption (Ctrl-C, kill -9, a crash) skips every finished cell. A failed cell
is recorded with its error (`OUT/failed/<cell>.json`) and rerun only with `--retry-failed`. At the end
`OUT/results.parquet` holds one row per cell: its parameters, `status`, `error`, and the summary keys of
`schedmate replay --json`. Cells of the `schedmate` annotator that use the LLM share one server: at most
`--llm-workers` of them run at a time. Exit code 1 when a cell of the grid is failed.
"""

PLOT_HELP = """Plot a sweep's results: Y against X, one line (numeric X) or bar group (categorical X) per HUE value.

Example: `schedmate plot runs/s --x load --y avg_jct_s --hue policy --out runs/s/jct_vs_load.png`.

SWEEP is a sweep directory or its results.parquet. Rows that share X and HUE (other seeds, say) are
averaged (`--agg`), with their min-max as a band or whiskers; `--where trace=philly` keeps only
matching cells (repeatable). Only finished cells are drawn. The format follows --out's suffix
(.png, .pdf, .svg).
"""


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    out = {}
    for v in values or []:
        key, sep, value = v.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{v!r}: expected KEY=VALUE", param_hint=what)
        out[key.strip()] = value.strip()
    return out


def _with_annotator_options(grid: Any, pairs: dict[str, str]) -> Any:
    import yaml

    from schedmate.sweep.grid import GridError, grid_from_dict

    data = grid.model_dump(mode="json", exclude_unset=True)
    options = data.setdefault("annotator_options", {})
    for dotted, raw in pairs.items():
        name, sep, key = dotted.partition(".")
        if not sep or not name or not key:
            raise GridError(f"--annotator-option {dotted}={raw}: expected ANNOTATOR.KEY=VALUE")
        options.setdefault(name, {})[key] = yaml.safe_load(raw)  # true/false/numbers as YAML reads them
    return grid_from_dict(data, source="command line")


def _sweep_command(
    grid_file: Annotated[Path | None, typer.Argument(metavar="[GRID]", help="YAML grid file (optional).")] = None,
    out: Annotated[Path, typer.Option(help="Sweep directory: parts/, failed/, results.parquet.")] = Path("sweep"),
    trace: Annotated[list[str] | None, typer.Option(help="Trace spec (repeatable); replaces `traces`.")] = None,
    policy: Annotated[list[str] | None, typer.Option(help="Policy (repeatable).")] = None,
    annotator: Annotated[list[str] | None, typer.Option(help="Annotator (repeatable).")] = None,
    network: Annotated[list[str] | None, typer.Option(help="Network (repeatable).")] = None,
    cluster: Annotated[list[str] | None, typer.Option(help="Cluster spec (repeatable).")] = None,
    seed: Annotated[list[int] | None, typer.Option(help="Seed (repeatable).")] = None,
    load: Annotated[list[float] | None, typer.Option(help="Arrival-rate factor (repeatable; 2 = twice the arrivals per hour).")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="Policy option KEY=VALUE for every cell (repeatable), as `schedmate replay -o`.")] = None,
    annotator_option: Annotated[list[str] | None, typer.Option(
        "--annotator-option", help="ANNOTATOR.KEY=VALUE for that annotator's factory (repeatable), e.g. "
                                   "schedmate.use_llm=false; added to the grid's annotator_options.")] = None,
    workers: Annotated[int, typer.Option(help="Cells running at once (local Ray CPUs or pool processes).")] = 2,
    backend: Annotated[str, typer.Option(help="auto (Ray if installed, else pool) | ray | pool | serial.")] = "auto",
    address: Annotated[str | None, typer.Option(help="An existing Ray cluster: auto, HOST:PORT or ray://HOST:PORT.")] = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Rerun the cells that failed before.")] = False,
    llm_workers: Annotated[int, typer.Option(help="LLM cells (annotator schedmate) running at once.")] = 1,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the cells and what is done; run nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sweep's report as one JSON object.")] = False,
) -> None:
    from schedmate.sweep.grid import GridError, load_grids
    from schedmate.sweep.runner import plan, run_sweep
    from schedmate.sweep.store import SweepBusy

    try:
        axes = {"traces": trace, "policies": policy, "annotators": annotator, "networks": network,
                "clusters": cluster, "seeds": seed, "loads": load}
        if option:
            axes["policy_options"] = [_pairs(option, "--option")]
        grids = load_grids(grid_file, **axes)
        if annotator_option:
            grids = [_with_annotator_options(g, _pairs(annotator_option, "--annotator-option")) for g in grids]
        if dry_run:
            cells, done, failed = plan(grids, out)
            for c in cells:
                state = "done" if c.key in done else ("FAILED" if c.key in failed else "to run")
                p = c.params()
                typer.echo(f"{c.key}  {state:7s} {p['trace']} {p['policy']} {p['annotator']} {p['cluster']} "
                           f"{p['network']} seed={p['seed']} load={p['load']} {p['policy_options']}")
            typer.echo(f"{len(cells)} cells: {sum(c.key in done for c in cells)} done, "
                       f"{sum(c.key in failed for c in cells)} failed")
            return
        report = run_sweep(grids, out, workers=workers, backend=backend, address=address,
                           retry_failed=retry_failed, llm_workers=llm_workers)
    except (GridError, SweepBusy, ValueError, FileNotFoundError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(report.model_dump_json())
    else:
        _say(report)
    if report.still_failed or report.interrupted:
        raise typer.Exit(1)


def _say(report: Any) -> None:
    from rich.console import Console
    from rich.markup import escape

    c = Console(highlight=False)
    c.print(f"{report.cells} cells: {report.already_done} already done, {report.ran} ran "
            f"({report.ok} ok, {report.failed} failed) on {report.backend} in {report.wall_s:.1f} s")
    if report.skipped_failed:
        c.print(f"{report.skipped_failed} cell(s) failed before and were not rerun (--retry-failed reruns them)")
    for key, err in list(report.errors.items())[:10]:
        c.print(f"[red]failed[/red] {key}: {escape(err)}  (traceback in {report.directory}/failed/{key}.json)")
    if len(report.errors) > 10:
        c.print(f"... and {len(report.errors) - 10} more in {report.directory}/failed/")
    c.print(f"results: {report.results}")


def _plot_command(
    sweep: Annotated[Path, typer.Argument(help="Sweep directory or its results.parquet.")],
    x: Annotated[str, typer.Option(help="Column on the x axis (e.g. load, policy, seed).")],
    y: Annotated[str, typer.Option(help="Numeric column on the y axis (e.g. avg_jct_s, p99_jct_s).")],
    hue: Annotated[str | None, typer.Option(help="Column whose values are separate lines or bars.")] = None,
    where: Annotated[list[str] | None, typer.Option(help="Keep cells with COLUMN=VALUE (repeatable).")] = None,
    kind: Annotated[str, typer.Option(help="auto (line for a numeric x, else bar) | line | bar.")] = "auto",
    agg: Annotated[str, typer.Option(help="mean | median | min | max over rows sharing x and hue.")] = "mean",
    logy: Annotated[bool, typer.Option("--logy", help="Logarithmic y axis.")] = False,
    title: Annotated[str | None, typer.Option(help="Figure title.")] = None,
    out: Annotated[Path | None, typer.Option(help="Figure file (default: SWEEP_DIR/<y>_vs_<x>[_by_<hue>].png).")] = None,
) -> None:
    from schedmate.sweep.plot import PlotError, plot_sweep, save
    from schedmate.sweep.store import load_table

    if kind not in ("auto", "line", "bar"):
        typer.echo(f"error: --kind: unknown {kind!r} (known: auto, line, bar)", err=True)
        raise typer.Exit(2)
    try:
        df = load_table(sweep)
        ax = plot_sweep(df, x=x, y=y, hue=hue, where=_pairs(where, "--where"), kind=kind, agg=agg,  # type: ignore[arg-type]
                        logy=logy)
    except (PlotError, FileNotFoundError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    base = sweep if sweep.is_dir() else sweep.parent
    path = out or base / (f"{y}_vs_{x}" + (f"_by_{hue}" if hue else "") + ".png")
    typer.echo(str(save(ax, path, title)))


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    app.command("sweep", help=SWEEP_HELP)(_sweep_command)
    app.command("plot", help=PLOT_HELP)(_plot_command)

