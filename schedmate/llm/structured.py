"""The structured-output protocol without I/O: render and key a call (`prepare`), phrase the request in the
server's dialect (`request_kwargs`), answer from the cache, validate, ask once for a repair, account and store
(`ask`). `LLMClient.structured` and `astructured` drive `ask` with their sync or async transport.

Dialects: `vllm` and `openai` get `response_format={"type": "json_schema", "json_schema": {...}}`; `llamacpp`
(llama-cpp-python, which rejects json_schema with a 500) gets `{"type": "json_object", "schema": {...}}`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from schedmate.llm.cache import LLMCache, cache_key, is_cacheable
from schedmate.llm.errors import LLMSchemaError
from schedmate.llm.prompts import Prompt, PromptParams, load_prompt
from schedmate.llm.usage import CallUsage, Usage
from schedmate.records import Provenance

T = TypeVar("T", bound=BaseModel)

_REPAIR = (
    "Your previous answer does not match the required JSON schema.\n"
    "Problems:\n{errors}\n"
    "Answer again with only the corrected JSON object."
)


@dataclass
class StructuredResult(Generic[T]):
    """A validated answer: `value` (an instance of the schema), the `raw` JSON text and what it cost."""

    value: T
    raw: str
    cached: bool
    usage: CallUsage
    component: str
    prompt_id: str
    prompt_version: str
    model: str
    finish_reason: str | None = None

    def provenance(self) -> Provenance:
        """The `records.Provenance` to attach to an annotation built from this answer."""
        return Provenance(
            component=self.component, prompt_id=self.prompt_id, prompt_version=self.prompt_version,
            model=self.model, llm_calls=self.usage.requests, latency_s=round(self.usage.seconds, 3),
        )


@dataclass
class Prepared:
    """One structured call, rendered: its messages, decoding parameters, schema and cache key."""

    prompt: Prompt
    messages: list[dict[str, Any]]
    params: PromptParams
    schema_json: dict[str, Any]
    schema_name: str
    key: str | None
    started: float = field(default_factory=time.monotonic)
    call: CallUsage = field(default_factory=CallUsage)


@dataclass
class Ledger:
    """Where a call's answer is stored and its cost accounted, and the model named in both."""

    model: str
    cache: LLMCache | None
    usage: Usage


def _format_errors(e: ValidationError, limit: int = 1500) -> str:
    lines = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(answer)"
        lines.append(f"- {loc}: {err.get('msg')}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "\n- ..."


def prepare(prompt: Prompt | str, variables: dict[str, Any] | None, schema: type[BaseModel],
            overrides: dict[str, Any], ledger: Ledger, use_cache: bool, dialect: str, started: float) -> Prepared:
    """Render `prompt` (`schema_json` is passed to the template unless the caller gives it) and key the call
    for the cache (deterministic calls only: temperature 0 or an explicit seed)."""
    if isinstance(prompt, str):
        prompt = load_prompt(prompt)
    schema_json = schema.model_json_schema()
    variables = dict(variables or {})
    variables.setdefault("schema_json", json.dumps(schema_json, separators=(",", ":")))
    messages = prompt.render(variables)
    params = prompt.params.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    key = None
    if use_cache and ledger.cache is not None and is_cacheable(params.temperature, params.seed):
        key = cache_key(prompt_id=prompt.id, prompt_version=prompt.version, messages=messages,
                        model=ledger.model, params=params.model_dump(), schema=schema_json,
                        dialect=dialect)
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "answer"
    return Prepared(prompt, messages, params, schema_json, name, key, started=started)


def request_kwargs(prep: Prepared, messages: list[dict[str, Any]], dialect: str, model: str) -> dict[str, Any]:
    """The `chat.completions.create` arguments of one attempt, constrained decoding in `dialect`."""
    p = prep.params
    kw: dict[str, Any] = {"model": model, "messages": messages, "temperature": p.temperature,
                          "max_tokens": p.max_tokens}
    if p.top_p is not None:
        kw["top_p"] = p.top_p
    if p.seed is not None:
        kw["seed"] = p.seed
    if dialect == "llamacpp":
        kw["response_format"] = {"type": "json_object", "schema": prep.schema_json}
    else:
        js: dict[str, Any] = {"name": prep.schema_name, "schema": prep.schema_json}
        if dialect == "vllm":
            js["strict"] = True
        kw["response_format"] = {"type": "json_schema", "json_schema": js}
    return kw


def account(call: CallUsage, response: Any) -> tuple[str, str | None]:
    """Add one response's request and tokens to `call`; its text and finish reason."""
    call.requests += 1
    u = getattr(response, "usage", None)
    if u is not None:
        call.prompt_tokens += int(getattr(u, "prompt_tokens", 0) or 0)
        call.completion_tokens += int(getattr(u, "completion_tokens", 0) or 0)
    choice = response.choices[0]
    return choice.message.content or "", choice.finish_reason


def _from_cache(prep: Prepared, schema: type[T], component: str, ledger: Ledger) -> StructuredResult[T] | None:
    if prep.key is None or ledger.cache is None:
        return None
    hit = ledger.cache.get(prep.key)
    if hit is None:
        return None
    try:
        raw = str(hit["raw"])
        value = schema.model_validate_json(raw)
    except (KeyError, ValidationError):
        return None  # stale or corrupt entry: a miss
    call = CallUsage(cached=True, seconds=time.monotonic() - prep.started)
    ledger.usage.record(component, call)
    return StructuredResult(value=value, raw=raw, cached=True, usage=call, component=component,
                            prompt_id=prep.prompt.id, prompt_version=prep.prompt.version,
                            model=ledger.model, finish_reason=hit.get("finish_reason"))


def _check(schema: type[T], raw: str, finish: str | None) -> tuple[T | None, str]:
    try:
        return schema.model_validate_json(raw), ""
    except ValidationError as e:
        errors = _format_errors(e)
        if finish == "length":
            errors += "\n- the answer was cut off at max_tokens; keep it shorter"
        return None, errors


def _repair_messages(prep: Prepared, raw: str, errors: str) -> list[dict[str, Any]]:
    return [*prep.messages, {"role": "assistant", "content": raw[:4000]},
            {"role": "user", "content": _REPAIR.format(errors=errors)}]


def _done(prep: Prepared, schema: type[T], component: str, ledger: Ledger, value: T | None,
          raw: str, errors: str, finish: str | None) -> StructuredResult[T]:
    call = prep.call
    call.seconds = time.monotonic() - prep.started
    if value is None:
        ledger.usage.record(component, call, failed=True)
        raise LLMSchemaError(
            f"prompt {prep.prompt.id!r} v{prep.prompt.version}: answer does not match {schema.__name__} "
            f"after {call.requests} attempt(s):\n{errors}\nlast answer: {raw[:300]!r}",
            raw=raw, errors=errors, prompt_id=prep.prompt.id, attempts=call.requests,
        )
    ledger.usage.record(component, call)
    if prep.key is not None and ledger.cache is not None:
        ledger.cache.put(prep.key, {"raw": raw, "finish_reason": finish, "prompt_tokens": call.prompt_tokens,
                                    "completion_tokens": call.completion_tokens},
                         prompt_id=prep.prompt.id, model=ledger.model)
    return StructuredResult(value=value, raw=raw, cached=False, usage=call, component=component,
                            prompt_id=prep.prompt.id, prompt_version=prep.prompt.version,
                            model=ledger.model, finish_reason=finish)


def ask(prep: Prepared, schema: type[T], component: str, dialect: str, ledger: Ledger,
        ) -> Generator[dict[str, Any], Any, StructuredResult[T]]:
    """The structured-call protocol, shared by `structured` and `astructured`: yields the request kwargs for
    each attempt (the first, then at most one repair), is sent the response, and returns the result (or
    raises `LLMSchemaError`). The caller sends the responses and accounts an `LLMError` from its transport
    as a failed call."""
    hit = _from_cache(prep, schema, component, ledger)
    if hit is not None:
        return hit
    call = prep.call
    raw, finish = account(call, (yield request_kwargs(prep, prep.messages, dialect, ledger.model)))
    value, errors = _check(schema, raw, finish)
    if value is None:
        call.repaired = True
        msgs = _repair_messages(prep, raw, errors)
        raw, finish = account(call, (yield request_kwargs(prep, msgs, dialect, ledger.model)))
        value, errors = _check(schema, raw, finish)
    return _done(prep, schema, component, ledger, value, raw, errors, finish)
