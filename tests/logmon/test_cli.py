"""The stable CLI contract: `schedmate analyze log` and `schedmate monitor`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from schedmate.cli import app

runner = CliRunner()
OOM = ("iter 10: loss 2.5, time 100.00ms\niter 20: loss 2.4, time 100.00ms\n"
       "Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
CONTRACT = {
    "failure": {"category", "failed", "onset_line", "root_cause", "recoverable", "action"},
    "progress": {"current_step", "total_steps", "epoch", "total_epochs", "iteration_time_s", "samples_per_s",
                 "last_loss"},
}


def test_analyze_log_prints_one_json_object_with_the_contract_fields(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(OOM)
    res = runner.invoke(app, ["analyze", "log", str(log), "--json", "--no-llm"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    for key, fields in CONTRACT.items():
        assert fields <= set(out[key])
    assert {"remaining_time_s", "llm_calls", "rules_matched"} <= set(out)
    assert out["failure"] == {"category": "oom", "failed": True, "onset_line": 3, "recoverable": True,
                              "action": "reduce_memory", "root_cause": out["failure"]["root_cause"]}
    assert out["progress"]["current_step"] == 20 and out["progress"]["total_steps"] is None
    assert out["llm_calls"] == 0 and out["rules_matched"] == 4


def test_analyze_log_with_the_server_down_falls_back_to_rules_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on port 9
    monkeypatch.setenv("SCHEDMATE_LLM_DIALECT", "openai")
    log = tmp_path / "job.log"
    log.write_text("iter 10: loss 2.5, time 100.00ms\nmy-loader: 12 tok/s step 3 weird metric line\n" + OOM)
    res = runner.invoke(app, ["analyze", "log", str(log), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["failure"]["category"] == "oom" and out["llm_calls"] == 0
    assert "LLM unavailable" in res.stderr


def test_analyze_log_reports_a_missing_file_clearly(tmp_path):
    res = runner.invoke(app, ["analyze", "log", str(tmp_path / "nope.log"), "--json", "--no-llm"])
    assert res.exit_code == 2 and "no such file" in res.stderr


def test_monitor_prints_json_updates_and_exits_with_3_on_a_failure_at_end_of_file(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(OOM)
    res = runner.invoke(app, ["monitor", str(log), "--json", "--no-llm"])
    assert res.exit_code == 3
    updates = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert updates and updates[-1]["failure"]["category"] == "oom"


def test_monitor_exits_0_at_end_of_a_healthy_log(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("".join(f"iter {s}: loss 2.0, time 100.00ms\n" for s in range(1, 30)))
    res = runner.invoke(app, ["monitor", str(log), "--json", "--no-llm"])
    assert res.exit_code == 0
    assert json.loads(res.stdout.splitlines()[-1])["progress"]["current_step"] == 29


def test_monitor_follow_survives_rotation_and_stops_on_a_terminal_failure(tmp_path):
    import os
    import subprocess
    import sys

    log = tmp_path / "job.log"
    log.write_text("".join(f"iter {s}: loss 2.0, time 100.00ms\n" for s in range(1, 11)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "schedmate.cli", "monitor", str(log), "--follow", "--json", "--no-llm",
         "--grace", "0", "--poll", "0.1", "--interval", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        first = json.loads(proc.stdout.readline())  # the monitor has read the first file
        assert first["progress"]["current_step"] == 10
        os.rename(log, tmp_path / "job.log.1")
        log.write_text("".join(f"iter {s}: loss 2.0, time 100.00ms\n" for s in range(11, 16)) + OOM.split("\n", 2)[2])
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 3, err
    last = json.loads(out.strip().splitlines()[-1])
    assert last["failure"]["category"] == "oom" and last["progress"]["current_step"] == 15
    assert last["failure"]["onset_line"] == 16  # line numbers continue across the rotated files
