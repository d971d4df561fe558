"""Sweeps run for real: on a local Ray instance, in a process pool, in-process; killed and resumed; with
failing cells recorded and retried on request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from schedmate.cli import app
from schedmate.replay import ReplaySpec, replay
from schedmate.sweep import SweepGrid, SweepStore, load_table, run_sweep

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
METRICS = ["jobs", "avg_jct_s", "p99_jct_s", "avg_queue_s", "makespan_s", "gpu_utilization", "preemptions"]
SMALL = {"traces": ["synth:helios:120:1"], "policies": ["fifo", "sjf"], "seeds": [0, 1], "clusters": ["nodes=4,gpus=8,rack=2"]}


def schedmate(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedmate.cli", *args], capture_output=True, text=True,
                          timeout=600, check=False, env={**os.environ, **(env or {})})


def by_cell(df: pd.DataFrame) -> pd.DataFrame:
    return df.set_index("cell")[METRICS].sort_index()


@pytest.fixture(scope="module")
def serial_table(tmp_path_factory) -> pd.DataFrame:
    report = run_sweep(SweepGrid(**SMALL), tmp_path_factory.mktemp("serial"), backend="serial", progress=False)
    assert report.ok == 4 and report.failed == 0
    return report.table()


def test_a_small_grid_runs_on_a_local_ray_instance_with_the_numbers_of_schedmate_replay(tmp_path, serial_table):
    try:
        import ray
    except ImportError:
        pytest.fail("Ray is not installed: pip install -e '.[sweep]' (bootstrap.py installs it)")
    try:
        report = run_sweep(SweepGrid(**SMALL), tmp_path, workers=2, backend="ray", progress=False)
    finally:
        ray.shutdown()
    assert report.backend.startswith("Ray: a local Ray instance") and (report.ok, report.failed) == (4, 0)
    df = report.table()
    assert len(df) == 4 and len(list((tmp_path / "parts").glob("*.parquet"))) == 4
    assert list(zip(df.policy, df.seed, strict=True)) == [("fifo", 0), ("fifo", 1), ("sjf", 0), ("sjf", 1)]
    assert all(not w.endswith(f":{os.getpid()}") for w in df.worker)  # ran in Ray's worker processes
    for row in df.itertuples():
        direct = replay(ReplaySpec(trace=row.trace_spec, policy=row.policy, cluster=row.cluster, seed=row.seed)).summary
        assert (row.jobs, row.avg_jct_s, row.p99_jct_s, row.makespan_s) == (
            direct.jobs, direct.avg_jct_s, direct.p99_jct_s, direct.makespan_s)
    pd.testing.assert_frame_equal(by_cell(df), by_cell(serial_table))


def test_a_process_pool_in_any_order_gives_the_same_rows_as_one_process(tmp_path, serial_table):
    reordered = SweepGrid(**{**SMALL, "policies": ["sjf", "fifo"], "seeds": [1, 0]})
    report = run_sweep(reordered, tmp_path, workers=2, backend="pool", progress=False)
    assert report.backend == "a local process pool of 2 worker(s)" and report.ok == 4
    df = report.table()
    assert len(set(df.worker)) >= 1 and all(not w.endswith(f":{os.getpid()}") for w in df.worker)
    pd.testing.assert_frame_equal(by_cell(df), by_cell(serial_table))


def test_a_sweep_killed_mid_run_resumes_without_redoing_finished_cells(tmp_path):
    out, gate = tmp_path / "sweep", tmp_path / "gate"
    grid = tmp_path / "grid.yaml"
    grid.write_text("traces: ['synth:helios:80:1']\npolicies: [fifo, sjf]\nseeds: [0, 1]\n"
                    "clusters: ['nodes=4,gpus=8,rack=2']\ncollect: sweep_gates:wait_for_gate\n")
    env = {"SWEEP_TEST_GATE": str(gate), "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    proc = subprocess.Popen([sys.executable, "-m", "schedmate.cli", "sweep", str(grid), "--out", str(out),
                             "--backend", "serial"], env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hang_guard = time.monotonic() + 600  # not a measurement: only stops a broken sweep from hanging the suite
    try:  # the first cell (fifo, seed 0) finishes; the second (fifo, seed 1) waits at the closed gate
        while not list((out / "parts").glob("*.parquet")) and proc.poll() is None and time.monotonic() < hang_guard:
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in (out / "parts").glob("*.parquet")}
    assert len(finished) == 1 and not (out / "results.parquet").exists()
    killed_row = pd.read_parquet(out / "parts" / next(iter(finished)))
    assert (killed_row.policy[0], killed_row.seed[0]) == ("fifo", 0)
    (out / "parts" / ".half-written.parquet.123.tmp").write_bytes(b"PAR1 cut short")

    gate.touch()
    p = schedmate("sweep", str(grid), "--out", str(out), "--backend", "serial", "--json", env=env)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert (report["cells"], report["already_done"], report["ran"], report["ok"]) == (4, 1, 3, 3)
    for name, mtime in finished.items():  # the finished cell's row was neither rerun nor rewritten
        assert (out / "parts" / name).stat().st_mtime_ns == mtime
    df = load_table(out)
    assert len(df) == 4 and (df.status == "ok").all() and df.gate_passed.all()
    assert df[(df.policy == "fifo") & (df.seed == 0)].worker.item() == killed_row.worker[0]
    assert not list(out.rglob("*.tmp"))


def test_a_failed_cell_is_recorded_with_its_error_and_rerun_only_when_asked(tmp_path, monkeypatch):
    gate = tmp_path / "gate"
    monkeypatch.setenv("SWEEP_TEST_GATE", str(gate))
    monkeypatch.syspath_prepend(str(HERE))
    grid = SweepGrid(**{**SMALL, "policies": ["sjf"]}, collect="sweep_gates:fail_without_gate")
    first = run_sweep(grid, tmp_path / "s", backend="serial", progress=False)
    assert (first.ok, first.failed, first.still_failed) == (1, 1, 1)
    (key, error), = first.errors.items()
    assert error == f"RuntimeError: gate {gate} is closed"
    record = json.loads((tmp_path / "s" / "failed" / f"{key}.json").read_text())
    assert "fail_without_gate" in record["traceback"]
    df = first.table()
    assert list(df.status) == ["ok", "failed"] and df.error[1] == error and pd.isna(df.avg_jct_s[1])

    gate.touch()
    again = run_sweep(grid, tmp_path / "s", backend="serial", progress=False)
    assert (again.ran, again.skipped_failed, again.still_failed) == (0, 1, 1)
    retried = run_sweep(grid, tmp_path / "s", backend="serial", progress=False, retry_failed=True)
    assert (retried.ran, retried.ok, retried.still_failed) == (1, 1, 0)
    assert not (tmp_path / "s" / "failed" / f"{key}.json").exists()
    df = retried.table()
    assert (df.status == "ok").all() and (df.jobs_seen == df.jobs).all()
    side = pd.read_parquet(tmp_path / "s" / "by_gpus.parquet")
    assert set(side.cell) == set(df.cell) and side.groupby("cell").jobs.sum().to_dict() == df.set_index("cell").jobs.to_dict()


def test_a_cell_whose_trace_is_missing_fails_alone_naming_the_file(tmp_path):
    grid = SweepGrid(traces=["synth:helios:60:1", str(tmp_path / "nope.csv")], clusters=["32"])
    report = run_sweep(grid, tmp_path / "s", backend="serial", progress=False)
    assert (report.ok, report.failed) == (1, 1)
    assert "nope.csv" in next(iter(report.errors.values()))


def test_a_second_sweep_in_the_same_directory_is_refused_while_the_first_runs(tmp_path):
    from schedmate.sweep.store import SweepBusy

    first = SweepStore(tmp_path).open_for_writing()
    try:
        with pytest.raises(SweepBusy, match="another sweep is running"):
            run_sweep(SweepGrid(**SMALL), tmp_path, backend="serial", progress=False)
    finally:
        first.close()


def test_sweep_on_the_command_line_writes_one_row_per_cell_and_lists_them_in_a_dry_run(tmp_path):
    args = ["sweep", "--trace", "synth:helios:60:1", "--policy", "fifo", "--policy", "sjf", "--load", "0.5",
            "--load", "2", "--cluster", "32", "--out", str(tmp_path)]
    dry = CliRunner().invoke(app, [*args, "--dry-run"])
    assert dry.exit_code == 0 and "4 cells: 0 done, 0 failed" in dry.stdout
    r = CliRunner().invoke(app, [*args, "--backend", "serial", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["ok"] == 4
    df = pd.read_parquet(tmp_path / "results.parquet")
    assert sorted(df.load) == [0.5, 0.5, 2.0, 2.0]
    fifo = df[df.policy == "fifo"].set_index("load")
    assert fifo.makespan_s[2.0] < fifo.makespan_s[0.5]  # twice the arrival rate: the same jobs end sooner
    assert "4 cells: 4 done" in CliRunner().invoke(app, [*args, "--dry-run"]).stdout


def test_sweep_without_ray_runs_in_a_process_pool_and_says_so(tmp_path):
    hide = tmp_path / "noray"
    hide.mkdir()
    (hide / "ray.py").write_text("raise ImportError('Ray is hidden for this test')\n")
    p = schedmate("sweep", "--trace", "synth:helios:40:1", "--cluster", "32", "--workers", "1",
                  "--out", str(tmp_path / "s"), "--json", env={"PYTHONPATH": os.pathsep.join([str(hide), str(ROOT)])})
    assert p.returncode == 0, p.stderr
    assert "Ray is not installed" in p.stderr and "process pool" in p.stderr
    assert json.loads(p.stdout)["backend"] == "a local process pool of 1 worker(s)"


@pytest.mark.parametrize("args,message", [
    (["--trace", "default", "--policy", "lottery"], "policies: unknown value 'lottery'"),
    (["--policy", "fifo"], "no traces"),
    (["--trace", "default", "--workers", "0"], "workers: must be at least 1"),
    (["--trace", "default", "--backend", "slurm"], "backend: unknown 'slurm'"),
    (["--trace", "default", "--annotator-option", "use_llm=false"], "expected ANNOTATOR.KEY=VALUE"),
])
def test_sweep_refuses_bad_arguments_with_a_clear_error_and_exit_code_2(tmp_path, args, message):
    r = CliRunner().invoke(app, ["sweep", *args, "--out", str(tmp_path)])
    assert r.exit_code == 2 and message in r.stderr, r.stderr


def test_the_main_table_runs_its_cells_through_the_sweep(tmp_path):
    p = subprocess.run([sys.executable, "-m", "eval.main.run", "--out", str(tmp_path), "--jobs", "40",
                        "--traces", "helios", "--policies", "fifo", "sjf", "--annotators", "none", "oracle",
                        "--backend", "serial"], capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    sweep = pd.read_parquet(tmp_path / "sweep" / "results.parquet")
    table = pd.read_csv(tmp_path / "results.csv")
    assert len(sweep) == len(table) == 4
    assert list(table.avg_jct_h) == pytest.approx(list(sweep.avg_jct_s / 3600))
    assert (table[table.annotator == "oracle"].vs_oracle == 1.0).all()
    assert (tmp_path / "main_helios.png").exists() and "| helios | fifo | none |" in (tmp_path / "results.md").read_text()


def test_a_pool_worker_that_dies_fails_its_cell_and_the_sweep_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(HERE))
    grid = SweepGrid(**{**SMALL, "seeds": [0, 1, 2]}, collect="sweep_gates:die_at_seed_one")
    report = run_sweep(grid, tmp_path, workers=1, backend="pool", progress=False)
    assert (report.ok, report.failed) == (4, 2)
    df = report.table()
    assert set(df[df.status == "failed"].seed) == {1}
    assert all(e.startswith("worker died") for e in report.errors.values())


def test_a_cell_replays_the_scheduler_its_factory_builds(tmp_path, monkeypatch):
    from schedmate.policies import build_scheduler

    monkeypatch.syspath_prepend(str(HERE))
    grid = SweepGrid(**{**SMALL, "seeds": [0], "policies": ["consolidate-fifo"]},
                     scheduler_factory="sweep_gates:consolidating_scheduler")
    row = run_sweep(grid, tmp_path, backend="serial", progress=False).table().iloc[0]
    strict = build_scheduler("fifo", "consolidate-rack")
    strict.backfill = False
    direct = replay(row.trace_spec, scheduler=strict, cluster=row.cluster, seed=0).summary
    assert (row.policy, row.run_policy) == ("consolidate-fifo", direct.policy)
    assert (row.avg_jct_s, row.makespan_s) == (direct.avg_jct_s, direct.makespan_s)


def test_the_table_of_a_sweep_still_running_holds_the_cells_finished_since_its_last_consolidation(tmp_path):
    from schedmate.sweep import run_cell

    run_sweep(SweepGrid(**{**SMALL, "policies": ["fifo"]}), tmp_path, backend="serial", progress=False)
    assert len(load_table(tmp_path)) == 2
    later = SweepGrid(**{**SMALL, "policies": ["sjf"], "seeds": [0]}).cells()[0]
    SweepStore(tmp_path).record(run_cell(later))  # as a running sweep stores a finished cell
    df = load_table(tmp_path)
    assert len(df) == 3 and later.key in set(df.cell)
    assert len(pd.read_parquet(tmp_path / "results.parquet")) == 2
