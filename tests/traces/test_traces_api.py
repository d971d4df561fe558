"""load_trace: spec forms, format detection, bad arguments."""

from __future__ import annotations

import shutil

import pytest

from schedmate.traces import TraceFormatError, detect_format, load_trace, shared_traces_dir


@pytest.mark.parametrize("rel,fmt", [
    ("csv/jobs.csv", "csv"), ("helios/cluster_log.csv", "helios"), ("acme/trace_seren.csv", "acme"),
    ("acme/trace_kalos.csv", "acme"), ("philly/cluster_job_log.json", "philly"), ("pai2020", "pai2020"),
    ("gavel/bad.trace", "gavel"), ("alibaba2023/openb_pod_list_bad.csv", "alibaba2023"),
])
def test_the_format_is_detected_from_the_file_name(fixtures, rel, fmt):
    assert detect_format(fixtures / rel) == fmt


@pytest.mark.parametrize("rel,fmt", [("helios/cluster_log.csv", "helios"), ("acme/trace_seren.csv", "acme"),
                                     ("csv/jobs.csv", "csv"), ("alibaba2023/openb_pod_list_bad.csv", "alibaba2023")])
def test_a_renamed_file_is_detected_from_its_header(fixtures, tmp_path, rel, fmt):
    p = tmp_path / "renamed.csv"
    shutil.copy(fixtures / rel, p)
    assert detect_format(p) == fmt


def test_an_explicit_format_overrides_detection(fixtures, tmp_path):
    p = tmp_path / "mystery.txt"
    shutil.copy(fixtures / "helios" / "cluster_log.csv", p)
    assert load_trace(str(p), fmt="helios").fmt == "helios"
    with pytest.raises(TraceFormatError):  # the helios file is not a valid plain csv
        load_trace(str(p), fmt="csv")


def test_an_unrecognisable_file_says_which_formats_exist(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(TraceFormatError, match="pass fmt="):
        load_trace(str(p))


def test_bad_arguments_are_refused(fixtures):
    with pytest.raises(FileNotFoundError):
        load_trace("/no/such/trace.csv")
    with pytest.raises(ValueError, match="unknown trace format"):
        load_trace(str(fixtures / "csv" / "jobs.csv"), fmt="slurm")
    with pytest.raises(ValueError, match="on_error"):
        load_trace("default", on_error="ignore")


def test_the_shared_folder_follows_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("SCHEDMATE_SHARED_TRACES", str(tmp_path))
    assert shared_traces_dir() == tmp_path
    monkeypatch.delenv("SCHEDMATE_SHARED_TRACES")
    assert shared_traces_dir().parts[-2:] == ("shared", "traces")
