"""Nothing is dropped in silence: skipped rows, jobs too big for the cluster, implausible values, unreadable
log paths and scratch directories are all said or cleaned up."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schedmate.cli import app
from schedmate.replay import replay
from schedmate.traces import load_trace
from schedmate.traces.base import TraceFormatError

ROWS = ("id,user,submit_time,num_gpus,duration_s\nj1,u,0,8,3600\nj2,u,10,4,-5\nj3,u,20,2,1e308\n"
        "j4,u,30,abc,100\nj5,u,40,4096,100\nj6,u,50,2,600\n")


def test_skipped_rows_and_dropped_jobs_are_counted_in_the_summary_and_listed_on_stderr(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text(ROWS)
    s = replay(str(trace), on_error="skip", cluster="64").summary
    assert (s.jobs, s.skipped_rows, s.dropped_jobs) == (2, 3, 1)
    err = capsys.readouterr().err
    assert f"{trace}:3:duration_s" in err and f"{trace}:5:num_gpus" in err and "j5 (4096 GPUs)" in err


def test_a_duration_over_a_year_is_a_row_error_not_a_job(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("id,user,submit_time,num_gpus,duration_s\nj1,u,0,8,3600\nj2,u,5,1,1e308\n")
    with pytest.raises(TraceFormatError, match="over a year"):
        load_trace(str(trace))
    assert [j.id for j in load_trace(str(trace), on_error="skip").jobs] == ["j1"]


def test_analyze_log_on_a_directory_says_it_is_a_directory(tmp_path):
    r = CliRunner().invoke(app, ["analyze", "log", str(tmp_path)])
    assert r.exit_code == 2 and "is a directory" in r.output


def test_the_scratch_semantic_directory_is_removed_after_the_replay():
    from schedmate.annotators.semantic import SemanticAnnotator

    before = set(Path(tempfile.gettempdir()).glob("schedmate-semantic-*"))
    replay("synth:philly:12:1", annotator=SemanticAnnotator(use_llm=False))
    assert set(Path(tempfile.gettempdir()).glob("schedmate-semantic-*")) == before


def test_a_replay_spec_runs_like_the_keywords_and_is_recorded_in_the_summary():
    from schedmate.replay import ReplaySpec

    spec = ReplaySpec(trace="synth:philly:40:2", policy="sjf", cluster="32")
    by_spec = replay(spec).summary
    by_keywords = replay("synth:philly:40:2", policy="sjf", cluster="32").summary
    assert by_spec.avg_jct_s == by_keywords.avg_jct_s
    assert by_spec.spec == spec.model_dump(mode="json") == by_keywords.spec
    with pytest.raises(ValueError):
        ReplaySpec(trace="default", on_error="ignore")
