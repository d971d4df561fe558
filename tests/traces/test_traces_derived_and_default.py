"""derived:philly (Gavel arrivals/GPUs + real Philly durations) and the embedded default trace."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedmate.records import Outcome
from schedmate.traces import DEFAULT_TRACE, load_trace
from schedmate.traces.loaders import gpu_class


def _gavel(shared: Path) -> pd.DataFrame:
    frames = []
    for f in sorted((shared / "philly-derived-gavel" / "seed=0").glob("*.trace")):
        df = pd.read_csv(f, sep="\t", header=None)
        df["id"] = [f"{f.stem}-{n}" for n in range(1, len(df) + 1)]
        frames.append(df)
    return pd.concat(frames).sort_values([5, "id"], kind="stable")


def test_derived_philly_keeps_gavel_arrivals_and_gpu_counts(shared):
    t = load_trace("derived:philly:3000:5")
    g = _gavel(shared).head(3000)
    assert [j.id for j in t.jobs] == g["id"].tolist()
    assert [(j.submit_time, j.id) for j in t.jobs] == sorted((j.submit_time, j.id) for j in t.jobs)
    assert [j.num_gpus for j in t.jobs] == g[6].tolist()
    assert np.allclose([j.submit_time for j in t.jobs], g[5].to_numpy() - g[5].iloc[0])
    assert all(j.outcome is Outcome.completed and j.vc == j.id.split("-")[0] for j in t.jobs)
    assert all(j.workload is not None and j.spread_slowdown >= 1 for j in t.jobs)


def test_derived_durations_come_from_real_pairs_of_the_same_gpu_class(shared):
    pairs = pd.read_csv(shared / "philly" / "gavel_philly_job_distribution.derived.csv")
    pools = {k: set(v) for k, v in pairs.groupby("num_gpus")["duration_s"]}
    t = load_trace("derived:philly:15264")
    odd = [j for j in t.jobs if j.num_gpus not in (1, 2, 4, 8)]
    assert odd, "the msr traces have GPU counts outside {1,2,4,8}"
    for j in t.jobs:
        assert j.duration_s in pools[gpu_class(j.num_gpus)]
    # a class-blind draw would put many 1-GPU durations in the 8-GPU pool; check one class is exclusive
    eight_only = pools[8] - pools[1] - pools[2] - pools[4]
    assert any(j.duration_s in eight_only for j in t.jobs if gpu_class(j.num_gpus) == 8)
    assert not any(j.duration_s in eight_only for j in t.jobs if gpu_class(j.num_gpus) == 1)


def test_gpu_counts_outside_the_classes_map_to_the_nearest_class():
    assert list(gpu_class(np.array([1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 64]))) == [1, 2, 4, 4, 4, 8, 8, 8, 8, 8, 8]


def test_derived_philly_is_seeded_and_compress_divides_arrivals(shared):
    a, b, c = (load_trace(s) for s in ("derived:philly:500:3", "derived:philly:500:3", "derived:philly:500:4"))
    assert a.jobs == b.jobs and [j.duration_s for j in a.jobs] != [j.duration_s for j in c.jobs]
    z = load_trace("derived:philly:500:3:50")
    assert [j.duration_s for j in z.jobs] == [j.duration_s for j in a.jobs]
    assert np.allclose([j.submit_time * 50 for j in z.jobs], [j.submit_time for j in a.jobs])
    w = load_trace("derived:philly:100", skip=400, seed=3)
    assert [j.id for j in w.jobs] == [j.id for j in a.jobs[400:500]]


def test_derived_philly_explains_itself_when_shared_traces_are_missing(tmp_path, monkeypatch):
    from schedmate.traces import TraceFormatError

    monkeypatch.setenv("SCHEDMATE_SHARED_TRACES", str(tmp_path / "nowhere"))
    with pytest.raises(TraceFormatError, match="SCHEDMATE_SHARED_TRACES"):
        load_trace("derived:philly:10")


def test_the_default_trace_loads_without_shared_data_and_offers_about_full_load(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDMATE_SHARED_TRACES", str(tmp_path / "nowhere"))
    t = load_trace("default")
    assert t.source == "default" and t.fmt == "csv" and len(t.jobs) == 500 and t.errors == []
    span = t.jobs[-1].submit_time - t.jobs[0].submit_time
    load = sum(j.num_gpus * j.duration_s for j in t.jobs) / (64 * span)
    assert 0.9 <= load <= 1.2
    assert max(j.num_gpus for j in t.jobs) <= 32 and all(j.workload for j in t.jobs)
    assert {j.outcome for j in t.jobs} == {Outcome.completed, Outcome.failed, Outcome.cancelled}


def test_the_default_trace_is_what_its_script_generates():
    script = DEFAULT_TRACE.parent / "make_default.py"
    spec = importlib.util.spec_from_file_location("make_default", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fresh = mod.build().reset_index(drop=True)
    committed = pd.read_csv(DEFAULT_TRACE)
    pd.testing.assert_frame_equal(fresh.astype(str).replace({"None": ""}),
                                  committed.fillna("").astype(str), check_dtype=False)
