"""`schedmate analyze code`: the stable JSON contract, the readable table, bad input, server-down fallback."""

from __future__ import annotations

import json
import socket

from typer.testing import CliRunner

from schedmate.cli import app

from .codeprof_support import DATASET

CONTRACT = {
    "framework",
    "model_family",
    "model_name",
    "params",
    "parallelism",
    "num_nodes",
    "gpus_per_node",
    "num_gpus",
    "micro_batch_size",
    "global_batch_size",
    "grad_accum_steps",
    "seq_len",
    "epochs",
    "train_steps",
    "precision",
    "comm_heavy",
    "network_sensitivity",
    "evidence",
    "llm_calls",
}
PARALLELISM = {"data", "zero_stage", "tensor", "pipeline", "expert", "context"}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_json_output_is_one_object_with_every_contract_key(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path))
    job = DATASET / "jobs" / "deepspeed_zero3_gpt2_xl_hostfile"
    r = CliRunner().invoke(app, ["analyze", "code", "--workdir", str(job), "--json", "--no-llm"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert CONTRACT <= set(out) and set(out["parallelism"]) == PARALLELISM
    assert out["parallelism"] == {
        "data": "zero",
        "zero_stage": 3,
        "tensor": 1,
        "pipeline": 1,
        "expert": 1,
        "context": 1,
    }
    assert (out["num_nodes"], out["gpus_per_node"], out["num_gpus"]) == (4, 8, 32)
    assert out["evidence"]["parallelism.zero_stage"]["where"] == ["configs/zero3.json:7"]
    assert out["llm_calls"] == 0


def test_an_explicit_command_overrides_command_txt_and_the_table_names_fields_and_sources(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path))
    job = DATASET / "jobs" / "ddp_resnet50_imagenet"
    r = CliRunner().invoke(
        app,
        [
            "analyze",
            "code",
            "--workdir",
            str(job),
            "--no-llm",
            "--command",
            "torchrun --nnodes 3 --nproc_per_node 2 train_imagenet.py",
        ],
        terminal_width=200,
    )
    assert r.exit_code == 0, r.output
    assert "num_gpus" in r.stdout and "static" in r.stdout and "derived" in r.stdout
    r = CliRunner().invoke(
        app,
        [
            "analyze",
            "code",
            "--workdir",
            str(job),
            "--no-llm",
            "--json",
            "--command",
            "torchrun --nnodes 3 --nproc_per_node 2 train_imagenet.py",
        ],
    )
    assert json.loads(r.stdout)["num_gpus"] == 6


def test_a_workdir_without_a_command_is_a_clear_error_with_exit_code_two(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path / "home"))
    (tmp_path / "train.py").write_text("import torch\n")
    r = CliRunner().invoke(app, ["analyze", "code", "--workdir", str(tmp_path), "--json", "--no-llm"])
    assert r.exit_code == 2
    assert "no --command given and no command.txt" in r.stderr


def test_with_the_server_down_the_static_profile_is_printed_with_a_warning_and_exit_code_zero(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path))
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("SCHEDMATE_LLM_DIALECT", "llamacpp")
    job = DATASET / "jobs" / "prose_params_custom_lm"  # has fields only an LLM could fill
    r = CliRunner().invoke(app, ["analyze", "code", "--workdir", str(job), "--json", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "warning:" in r.stderr and "unreachable" in r.stderr.lower()
    out = json.loads(r.stdout)
    # (params now come statically from the `--preset aurora-1.3b` default, a name that states its size)
    assert out["num_gpus"] == 16 and out["llm_calls"] == 0
    assert any("LLM" in w for w in out["warnings"])


def test_a_launcher_config_given_separately_applies_to_the_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path))
    job = DATASET / "jobs" / "hf_sft_llama_accelerate_fsdp"
    args = [
        "analyze",
        "code",
        "--workdir",
        str(job),
        "--json",
        "--no-llm",
        "--launcher-config",
        "configs/fsdp_2x8.yaml",
        "--command",
        "accelerate launch sft.py --per_device_train_batch_size 2",
    ]
    out = json.loads(CliRunner().invoke(app, args).stdout)
    assert (out["num_nodes"], out["num_gpus"], out["parallelism"]["data"]) == (2, 16, "fsdp")
    assert out["evidence"]["num_nodes"]["where"] == ["configs/fsdp_2x8.yaml:13"]
