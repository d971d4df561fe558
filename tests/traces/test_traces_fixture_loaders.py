"""Each file loader on our fixtures: mapping decisions, and the error paths for malformed rows."""

from __future__ import annotations

import pytest

from schedmate.records import FailureCategory, Outcome
from schedmate.traces import LOADERS, TraceFormatError, load_trace


def by_id(trace):
    return {j.id: j for j in trace.jobs}


# --------------------------------------------------------------------------- good fixtures


def test_a_plain_csv_maps_every_documented_column(fixtures):
    t = load_trace(str(fixtures / "csv" / "jobs.csv"))
    assert t.fmt == "csv" and len(t.jobs) == 10 and t.errors == []
    j = by_id(t)
    assert j["j003"].outcome is Outcome.failed and j["j003"].num_nodes == 2 and j["j003"].requested_time_s == 86400
    assert j["j001"].workload == "bert" and j["j001"].spread_slowdown == 3.0
    assert j["j004"].workload is None and j["j004"].spread_slowdown == 1.0
    assert j["j009"].outcome is Outcome.completed  # empty outcome defaults to completed
    assert j["j007"].num_gpus == 0 and j["j007"].num_nodes is None
    assert [x.submit_time for x in t.jobs] == sorted(x.submit_time for x in t.jobs)


def test_a_helios_log_maps_states_and_makes_times_relative_to_the_first_submit(fixtures):
    t = load_trace(str(fixtures / "helios" / "cluster_log.csv"))
    assert t.fmt == "helios" and len(t.jobs) == 14
    j = by_id(t)
    assert t.jobs[0].id == "5108231" and t.jobs[0].submit_time == 0.0
    assert j["5108232"].submit_time == 29.0
    assert j["5108251"].outcome is Outcome.cancelled and j["5108251"].num_nodes == 2 and j["5108251"].vc == "vcHvQ"
    assert j["5108270"].outcome is Outcome.timeout and j["5108270"].duration_s == 259200
    assert j["5108290"].outcome is Outcome.failed and j["5108290"].failure_category is FailureCategory.node
    assert j["5108305"].duration_s == 0.0  # cancelled before it started
    assert j["5108231"].workload is None and j["5108231"].spread_slowdown == 1.0
    assert t.stats["time_origin"] == "2020-04-01T00:02:11"


def test_a_helios_log_can_drop_cpu_jobs(fixtures):
    t = load_trace(str(fixtures / "helios" / "cluster_log.csv"), gpu_only=True)
    assert len(t.jobs) == 13 and all(j.num_gpus > 0 for j in t.jobs) and t.stats["cpu_jobs_dropped"] == 1


def test_acme_traces_normalise_state_and_type_case(fixtures):
    seren = by_id(load_trace(str(fixtures / "acme" / "trace_seren.csv")))
    assert seren["dlc1q9a77m02"].job_type == "Pretrain" and seren["dlc1q9a77m02"].outcome is Outcome.failed
    assert seren["dlc1q9a77m02"].workload == "gpt" and seren["dlc1q9a77m02"].spread_slowdown == 4.0
    assert seren["dlc1qb2ff002"].job_type == "Debug" and seren["dlc1qb2ff002"].workload is None
    assert seren["dlc1qc77k010"].outcome is Outcome.timeout
    assert seren["dlc1q9a77m01"].num_gpus == 256 and seren["dlc1q9a77m01"].num_nodes == 32
    kalos = load_trace(str(fixtures / "acme" / "trace_kalos.csv"))
    assert kalos.fmt == "acme" and len(kalos.jobs) == 10 and {j.vc for j in kalos.jobs} == {"kalos"}
    k = by_id(kalos)
    assert k["kls-000104"].outcome is Outcome.cancelled and k["kls-000110"].outcome is Outcome.timeout


def test_a_philly_job_log_sums_attempts_and_takes_gpus_from_the_last_attempt(fixtures):
    t = load_trace(str(fixtures / "philly" / "cluster_job_log.json"))
    assert t.fmt == "philly" and len(t.jobs) == 10
    j = by_id(t)
    retried = j["application_1506638472019_10250"]
    assert retried.num_gpus == 4 and retried.num_nodes == 1 and retried.outcome is Outcome.failed
    assert retried.duration_s == (11 * 60 + 10) + 15 * 60  # 02:30:00-02:41:10 plus 02:45-03:00
    two_nodes = j["application_1506638472019_10241"]
    assert two_nodes.num_gpus == 16 and two_nodes.num_nodes == 2 and two_nodes.outcome is Outcome.cancelled
    assert t.stats["censored"] == 1 and t.stats["never_started"] == 1
    assert "application_1506638472019_10311" not in j and "application_1506638472019_10270" not in j
    assert j["application_1506638472019_10238"].submit_time == 0.0


def test_pai2020_tables_sum_task_gpus_and_take_the_workload_from_group_tags(fixtures):
    t = load_trace(str(fixtures / "pai2020"))
    assert t.fmt == "pai2020" and len(t.jobs) == 6
    j = by_id(t)
    half = j["4b2a9f1c0d6e7a8b9c0d1e2f"]  # 1 instance x 50 % -> 1 GPU
    assert half.num_gpus == 1 and half.name == "ctr" and half.workload == "recommendation"
    ps = j["5c3b0a2d1e7f8b9cad1e2f30"]  # 4 workers x 100 % + 2 ps without GPU
    assert ps.num_gpus == 4 and ps.workload == "bert" and ps.duration_s == 1581831995 - 1581810405
    multi = j["8f6e3d504102ebcfd0415263"]  # 8 x 100 % + 1 x 25 % -> 8 + 1
    assert multi.num_gpus == 9 and multi.gpu_type == "V100M32" and multi.workload == "resnet50"
    assert j["a1b05f726324ade1f2637485"].num_gpus == 4 and j["a1b05f726324ade1f2637485"].workload is None
    assert j["b2c16083743500f203748596"].num_gpus == 1  # ceil(3 x 30 / 100)
    assert j["6d4c1b3e2f80c9adbe2f3041"].outcome is Outcome.failed
    assert t.stats["running_dropped"] == 1 and t.stats["waiting_dropped"] == 1


def test_the_pai2020_columns_are_the_ones_in_the_datasets_header_files(shared):
    from schedmate.traces.loaders import PAI_COLUMNS

    d = shared / "alibaba-gpu-v2020-schema-only"
    for table in ("job", "task", "group_tag"):
        header = (d / f"data_pai_{table}_table.header").read_text().strip().split(",")
        assert PAI_COLUMNS[table] == header


# --------------------------------------------------------------------------- malformed rows


MALFORMED = [
    # file, first bad (line, field), all bad lines, jobs kept in skip mode
    ("csv/jobs_bad.csv", (3, "submit_time"), [3, 4, 5, 6, 7, 8, 9], 2),
    ("helios/cluster_log_bad.csv", (3, "gpu_num"), [3, 4, 5, 6, 8], 3),
    ("acme/trace_seren_bad.csv", (3, "type"), [3, 5, 6], 2),
    ("philly/cluster_job_log_bad.json", (3, "status"), [3, 4, 5], 2),
    ("gavel/bad.trace", (2, "total_steps"), [2, 3, 4], 2),
    ("alibaba2023/openb_pod_list_bad.csv", (4, "pod_phase"), [4, 5, 6, 8], 3),
]


@pytest.mark.parametrize("name,first,lines,kept", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_fail_mode_names_the_file_line_and_field_of_the_first_bad_row(fixtures, name, first, lines, kept):
    with pytest.raises(TraceFormatError) as ei:
        load_trace(str(fixtures / name))
    err = ei.value.error
    assert (err.line, err.field) == first
    assert err.file.endswith(name)
    assert f"{name}:{first[0]}" in str(ei.value) and repr(first[1]) in str(ei.value)


@pytest.mark.parametrize("name,first,lines,kept", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_skip_mode_collects_every_bad_row_and_keeps_the_good_ones(fixtures, name, first, lines, kept):
    t = load_trace(str(fixtures / name), on_error="skip")
    assert [e.line for e in t.errors] == lines
    assert len(t.jobs) == kept
    assert all(e.file.endswith(name) for e in t.errors)


def test_each_kind_of_bad_value_gets_its_own_message(fixtures):
    errs = {e.line: e for e in load_trace(str(fixtures / "helios" / "cluster_log_bad.csv"), on_error="skip").errors}
    assert errs[3].field == "gpu_num" and "'one'" in errs[3].message
    assert errs[4].field == "duration" and ">= 0" in errs[4].message
    assert errs[5].field == "end_time" and "before start_time" in errs[5].message
    assert errs[6].field == "state" and "SUCCEEDED" in errs[6].message
    assert errs[8].field == "submit_time" and "2020-04-31" in errs[8].message
    csv_errs = {e.line: e for e in load_trace(str(fixtures / "csv" / "jobs_bad.csv"), on_error="skip").errors}
    assert csv_errs[8].field == "id" and "duplicate" in csv_errs[8].message
    assert csv_errs[9].field is None and "expected 12 fields, saw 13" in csv_errs[9].message
    assert csv_errs[7].field == "workload" and "alexnet" in csv_errs[7].message


def test_a_bad_task_row_drops_its_whole_pai_job(fixtures):
    with pytest.raises(TraceFormatError, match=r"pai_job_table.csv:2 field 'status'"):
        load_trace(str(fixtures / "pai2020_bad"))
    t = load_trace(str(fixtures / "pai2020_bad"), on_error="skip")
    assert [(e.file.rsplit("/", 1)[1], e.line, e.field) for e in t.errors] == [
        ("pai_job_table.csv", 2, "status"), ("pai_job_table.csv", 3, "end_time"), ("pai_task_table.csv", 4, "plan_gpu")]
    assert sorted(j.id for j in t.jobs) == ["4b2a9f1c0d6e7a8b9c0d1e2f", "a1b05f726324ade1f2637485"]
    assert t.stats["bad_task_dropped"] == 1


@pytest.mark.parametrize("name,column", [("helios/cluster_log_missing_column.csv", "state"),
                                         ("csv/jobs_missing_column.csv", "num_gpus")])
def test_a_missing_column_is_reported_at_the_header_even_in_skip_mode(fixtures, name, column):
    for mode in ("fail", "skip"):
        with pytest.raises(TraceFormatError) as ei:
            load_trace(str(fixtures / name), on_error=mode)
        assert ei.value.error.line == 1 and ei.value.error.field == column


def test_invalid_json_is_reported_with_its_line(tmp_path):
    p = tmp_path / "cluster_job_log.json"
    p.write_text('[\n{"status": "Pass", "jobid": "a", "submitted_time": "2017-10-03 02:04:04", "attempts": []},\n{"status": \n')
    with pytest.raises(TraceFormatError) as ei:
        load_trace(str(p))
    assert ei.value.error.line == 4 and "invalid JSON" in str(ei.value)


def test_every_registered_loader_has_a_name_and_a_load_method():
    assert set(LOADERS) == {"philly", "helios", "acme", "pai2020", "alibaba2023", "gavel", "csv"}
    for name, loader in LOADERS.items():
        assert loader.name == name and callable(loader.load) and loader.description


def test_a_slurm_export_with_other_time_strings_reads_with_time_format(fixtures, tmp_path):
    src = (fixtures / "helios" / "cluster_log.csv").read_text().splitlines()
    p = tmp_path / "cluster_log.csv"
    p.write_text("\n".join(src[:3]).replace("2020-04-01 ", "01/04/2020 ") + "\n")
    with pytest.raises(TraceFormatError, match=r"cluster_log.csv:2 field 'submit_time'"):
        load_trace(str(p))
    t = load_trace(str(p), time_format="%d/%m/%Y %H:%M:%S")
    assert [j.submit_time for j in t.jobs] == [0.0, 29.0]
