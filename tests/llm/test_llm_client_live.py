"""LLMClient against real local servers (`schedmate llm serve`); few calls, each costs seconds."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from llm_test_support import JobFacts, Launcher

from schedmate.llm import LLMClient, LLMConfig, LLMSchemaError, load_prompt
from schedmate.llm.serving import list_models
from schedmate.llm.transport import dialect_from_models

pytestmark = pytest.mark.llm

PROMPT = "_example_job_facts"
CMD = "torchrun --nnodes=2 --nproc_per_node=8 train_gpt.py --bf16 --global-batch 512"


def test_a_structured_call_returns_a_validated_model_on_each_engine(engine_server, make_client):
    client = make_client(engine_server)
    assert client.dialect() == engine_server.engine
    # a llama.cpp server answers /models only between generations: allow for a queue of other requests
    assert dialect_from_models(list_models(engine_server.base_url, timeout=120)) == engine_server.engine

    result = client.structured(load_prompt(PROMPT), variables={"command": CMD}, schema=JobFacts, component="code")

    assert isinstance(result.value, JobFacts)
    assert JobFacts.model_validate_json(result.raw) == result.value
    assert result.value.launcher is Launcher.torchrun
    assert not result.cached
    assert result.usage.requests >= 1 and result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    prov = result.provenance()
    assert (prov.component, prov.prompt_id, prov.prompt_version) == ("code", PROMPT, "1")
    assert client.usage.summary()["code"]["calls"] == 1


def test_a_second_identical_call_is_answered_from_the_cache_with_no_new_tokens(any_server, make_client, tmp_path):
    client = make_client(any_server)
    first = client.structured(PROMPT, {"command": CMD}, schema=JobFacts, component="code")
    second = client.structured(PROMPT, {"command": CMD}, schema=JobFacts, component="code")

    assert not first.cached and second.cached
    assert second.value == first.value and second.raw == first.raw
    assert (second.usage.requests, second.usage.prompt_tokens, second.usage.completion_tokens) == (0, 0, 0)
    code = client.usage.get("code")
    assert (code.calls, code.cache_hits, code.requests) == (2, 1, first.usage.requests)
    assert code.prompt_tokens == first.usage.prompt_tokens

    # A corrupt row is a miss, not a crash: the call goes to the server again and rewrites the row.
    with sqlite3.connect(tmp_path / "llm.sqlite") as db:
        assert db.execute("UPDATE answers SET value = '{not json'").rowcount == 1
    third = client.structured(PROMPT, {"command": CMD}, schema=JobFacts, component="code")
    assert not third.cached and third.usage.requests >= 1
    assert client.structured(PROMPT, {"command": CMD}, schema=JobFacts, component="code").cached


def test_a_sampled_call_is_cached_only_when_it_carries_a_seed(any_server, make_client):
    client = make_client(any_server)
    unseeded = [client.structured(PROMPT, {"command": CMD}, schema=JobFacts, temperature=0.7) for _ in range(2)]
    assert [r.cached for r in unseeded] == [False, False]
    assert all(r.usage.requests >= 1 for r in unseeded)
    assert len(client.cache) == 0

    seeded = [client.structured(PROMPT, {"command": CMD}, schema=JobFacts, temperature=0.7, seed=7) for _ in range(2)]
    assert [r.cached for r in seeded] == [False, True]
    assert len(client.cache) == 1


def test_an_answer_cut_by_max_tokens_gets_one_repair_then_raises_a_schema_error(any_server, make_client):
    client = make_client(any_server)
    with pytest.raises(LLMSchemaError) as info:
        client.structured(PROMPT, {"command": CMD}, schema=JobFacts, component="log", max_tokens=3)

    err = info.value
    assert err.attempts == 2 and err.prompt_id == PROMPT
    assert "cut off at max_tokens" in err.errors
    with pytest.raises(ValueError):
        JobFacts.model_validate_json(err.raw)
    log = client.usage.get("log")
    assert (log.calls, log.requests, log.repairs, log.failures) == (1, 2, 1, 1)
    assert len(client.cache) == 0


def test_async_calls_run_under_the_concurrency_limit_and_validate(any_server, make_client):
    client = make_client(any_server, max_concurrency=1)
    commands = [CMD, "deepspeed --num_gpus 4 finetune.py --deepspeed ds_zero3.json"]

    async def both():
        return await asyncio.gather(*(client.astructured(PROMPT, {"command": c}, schema=JobFacts,
                                                         component="async", use_cache=False) for c in commands))

    results = asyncio.run(both())
    assert [type(r.value) for r in results] == [JobFacts, JobFacts]
    assert results[1].value.launcher is Launcher.deepspeed
    assert client.usage.get("async").calls == 2


def test_a_forced_tool_call_round_trip_gives_arguments_then_a_final_answer(engine_server, make_client):
    client = make_client(engine_server)
    tools = [{
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the job's working directory.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    }]
    messages = [{"role": "user", "content": "The job runs `python train.py`. Read train.py to see its model."}]

    msg = client.chat(messages, tools=tools, tool_choice="read_file", component="agent", max_tokens=60)

    assert msg.tool_calls and msg.tool_calls[0].function.name == "read_file"
    args = json.loads(msg.tool_calls[0].function.arguments)
    assert isinstance(args.get("path"), str)
    call = msg.tool_calls[0]
    messages += [
        {"role": "assistant", "content": msg.content or "", "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": "read_file", "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "model = ResNet50()\ntrain(model)"},
    ]
    final = client.chat(messages, tools=tools, tool_choice="none", component="agent", max_tokens=40)
    assert final.content and not final.tool_calls
    assert client.usage.get("agent").requests == 2


def test_the_config_finds_the_running_server_when_no_url_is_set(any_server, monkeypatch):
    for var in ("SCHEDMATE_LLM_BASE_URL", "SCHEDMATE_LLM_MODEL", "SCHEDMATE_LLM_DIALECT"):
        monkeypatch.delenv(var, raising=False)
    config = LLMConfig.from_env()
    assert (config.base_url, config.model, config.dialect) == (
        any_server.base_url, any_server.model_alias, any_server.engine)
    assert any_server.model_alias in LLMClient(config, cache=False).models()
