"""`schedmate replay` as outside tools call it."""

import json
import subprocess
import sys

import pytest

from schedmate.cluster import parse_cluster
from schedmate.records import NetworkSpec

CONTRACT = {"jobs", "avg_jct_s", "p50_jct_s", "p99_jct_s", "avg_queue_s", "makespan_s", "gpu_utilization",
            "comm_overhead_gpu_s", "preemptions", "failed_gpu_hours", "wall_s"}


def schedmate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedmate.cli", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def test_replay_json_prints_one_object_with_the_contract_keys():
    p = schedmate("replay", "--trace", "default", "--policy", "tiresias", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert CONTRACT <= set(out)
    assert out["jobs"] == 500 and out["avg_jct_s"] > 0 and out["preemptions"] > 0


def test_replay_writes_tables_summary_and_plots(tmp_path):
    p = schedmate("replay", "--trace", "synth:helios:300:1", "--policy", "sjf", "--annotator", "oracle",
                  "--cluster", "nodes=4,gpus=8,rack=2", "--out", str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    names = {f.name for f in tmp_path.iterdir()}
    assert {"jobs.parquet", "jobs.csv", "summary.json", "timeseries.csv", "jct_cdf.png",
            "queue_length.png", "utilization.png"} <= names
    assert json.loads((tmp_path / "summary.json").read_text())["jobs"] == json.loads(p.stdout)["jobs"]


def test_replay_writes_each_jobs_last_annotation_in_the_format_schedmate_adapt_reads(tmp_path):
    from adapters.base import load_annotations

    p = schedmate("replay", "--trace", "synth:helios:50:1", "--policy", "sjf", "--annotator", "oracle",
                  "--cluster", "nodes=4,gpus=8,rack=2", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    annotations = load_annotations(tmp_path / "annotations.jsonl")
    assert len(annotations) == 50 and all(a.predicted_duration is not None for a in annotations)


def test_replay_help_documents_every_option():
    p = schedmate("replay", "--help")
    for option in ("--trace", "--format", "--policy", "--placement", "--annotator", "--cluster", "--network",
                   "--seed", "--out", "--json", "--on-error", "--option", "--semantic-noise"):
        assert option in p.stdout


@pytest.mark.parametrize("args,message", [
    (["--policy", "lottery"], "Unknown scheduling policy"),
    (["--cluster", "12"], "multiple of 8"),
    (["--network", "fast"], "unknown network spec"),
    (["--trace", "/nonexistent/trace.csv"], "error:"),
    (["--policy", "delay", "--option", "bogus=1"], "unknown option 'bogus'"),
    (["--policy", "fifo", "--option", "node_factor=1"], "takes no options"),
    (["--policy", "delay", "--option", "load_aware=maybe"], "expected true or false"),
    (["--policy", "delay", "--option", "node_factor"], "expected KEY=VALUE"),
    (["--policy", "delay", "-o", "preemption.bogus=1"], "unknown option 'preemption.bogus'"),
    (["--policy", "delay", "-o", "preemption=false", "-o", "preemption.guard_victims=2"], "turned off"),
    (["--policy", "delay", "-o", "preemption.guard_victims=two"], "preemption.guard_victims=two"),
])
def test_bad_arguments_get_a_clear_error_and_exit_code_2(args, message):
    p = schedmate("replay", *args, "--json")
    assert p.returncode == 2
    assert message in p.stderr


def test_a_malformed_trace_row_is_named_by_file_line_and_field(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("id,user,submit_time,num_gpus,duration_s\na,u,0,1,10\nb,u,5,two,10\nc,u,9,1,10\n")
    p = schedmate("replay", "--trace", str(f), "--format", "csv", "--json")
    assert p.returncode == 2 and "t.csv:3" in p.stderr and "num_gpus" in p.stderr
    p = schedmate("replay", "--trace", str(f), "--format", "csv", "--on-error", "skip", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["jobs"] == 2


def test_cluster_specs_parse_to_the_documented_shapes():
    assert parse_cluster("1024").total_gpus == 1024
    c = parse_cluster("nodes=6,gpus=4,rack=2", NetworkSpec.parse("congested:8"))
    assert (c.total_gpus, c.num_racks, c.network.uplink_oversubscription) == (24, 3, 8.0)


def test_the_real_philly_machine_list_is_a_cluster_spec():
    c = parse_cluster("philly")
    assert len(c.nodes) == 552 and c.total_gpus == 321 * 2 + 231 * 8


def test_policy_options_reach_the_delay_scheduler():
    # On the default trace the default delay moves a spread job back onto a freed node;
    # `migration=false` turns that off (the other option only has to parse).
    base = ["replay", "--trace", "default", "--cluster", "64", "--network", "congested", "--policy", "delay",
            "--json"]
    on = json.loads(schedmate(*base).stdout)
    off = schedmate(*base, "--option", "migration=false", "-o", "age_cap_s=1e9")
    assert off.returncode == 0, off.stderr
    off = json.loads(off.stdout)
    assert off["migrations"] == 0
    assert on["migrations"] > 0


def test_the_preemption_and_migration_configs_are_set_by_prefixed_options():
    from schedmate.policies import build_scheduler, policy_options

    opts = policy_options("delay", ["preemption.guard_victims=0", "migration.gain_factor=4", "locality_first=false"])
    sched = build_scheduler("delay", **opts)
    assert sched.preemption.config.guard_victims == 0 and sched.preemption.config.max_victims == 4
    assert sched.migration.config.gain_factor == 4.0
    assert sched.placement.timers.config.locality_first is False


def test_replay_semantic_noise_reaches_the_augmentation(tmp_path):
    def plans(k: str) -> dict[str, str]:
        p = schedmate("replay", "--trace", "synth:acme:80:1", "--policy", "sjf", "--annotator", "none",
                      "--cluster", "nodes=4,gpus=8,rack=2", "--semantic", str(tmp_path / k), "--semantic-noise", k,
                      "--json")
        assert p.returncode == 0, p.stderr
        return {f.name: json.loads(f.read_text())["planned_s"] for f in (tmp_path / k / "_plans").iterdir()}

    plain, noisy = plans("0"), plans("2")
    assert plain.keys() == noisy.keys()
    assert any(noisy[j] > plain[j] for j in plain)  # runs stopped early: their configured length overshoots
