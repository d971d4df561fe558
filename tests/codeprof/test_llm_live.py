"""The LLM pass against the real local server (`schedmate llm serve`); skipped when no server is up,
failing instead when SCHEDMATE_REQUIRE_LLM=1."""

from __future__ import annotations

import os

import pytest

from schedmate.codeprof.analyzer import analyze_code, static_profile
from schedmate.codeprof.llmpass import ASKABLE, run_llm_pass
from schedmate.llm import LLMCache, LLMClient, LLMConfig
from schedmate.llm.serving import running_server

from .codeprof_support import DATASET

pytestmark = pytest.mark.llm


@pytest.fixture
def client(tmp_path):
    state = running_server()
    if state is None:
        if os.environ.get("SCHEDMATE_REQUIRE_LLM") == "1":
            pytest.fail("SCHEDMATE_REQUIRE_LLM=1 but no LLM server is up", pytrace=False)
        pytest.skip("no LLM server: start one with `schedmate llm serve`")
    c = LLMClient(
        LLMConfig(base_url=state.base_url, model=state.model_alias), cache=LLMCache(tmp_path / "llm.sqlite")
    )
    yield c
    c.close()


def test_the_llm_fills_only_open_fields_with_schema_valid_grounded_values_and_static_facts_stay(client):
    job = DATASET / "jobs" / "prose_params_custom_lm"
    static = analyze_code(job, use_llm=False)
    prof = analyze_code(job, client=client)
    assert prof.llm_calls >= 1
    # (model_name and params are static now: the `--preset aurora-1.3b` default states the size)
    assert prof.extras["llm_fields_asked"] == ["model_family"]
    for name, f in static.facts.items():  # nothing static changed
        if f.source == "static":
            assert prof.facts[name].value == f.value and prof.facts[name].source == "static"
    for name, f in prof.facts.items():
        if f.source == "llm":
            assert name in ASKABLE and static.value(name) is None and f.evidence
    params = prof.facts.get("params")
    if params is not None:  # the only count stated anywhere is 1.3B: any value is that one
        assert params.value == pytest.approx(1.3e9, rel=0.05)
    assert prof.extras["prompt_tokens"] > 0


def test_a_second_identical_run_is_free_thanks_to_the_cache(client):
    job = DATASET / "jobs" / "cpu_tabular_mlp"
    first = analyze_code(job, client=client)
    second = analyze_code(job, client=client)
    assert first.llm_calls >= 1 and second.llm_calls == 0
    assert second.extras["prompt_tokens"] == 0
    assert second.to_contract()["model_family"] == first.to_contract()["model_family"]


def test_the_hostile_script_does_not_shrink_the_job_even_when_every_field_is_asked(client):
    job = DATASET / "jobs" / "trap_hostile_docstring"
    res, wd = static_profile(job)
    out = run_llm_pass(res, wd, client=client, fields=list(ASKABLE))
    merged = out.merged(dict(res.facts))
    prof = analyze_code(job, client=client)
    for facts in (merged, prof.facts):
        assert facts["num_gpus"].value == 32 and facts["num_nodes"].value == 4
        assert facts["num_gpus"].source == "static"
    assert prof.value("params") == pytest.approx(6.7e9) and prof.facts["params"].source == "derived"
    assert prof.value("comm_heavy") is True and prof.value("network_sensitivity") == 1.0
    # whatever the model said about size, no answer below a million parameters was accepted
    assert merged.get("params") is None or merged["params"].value >= 1e6
