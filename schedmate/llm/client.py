"""`LLMClient`: structured output and chat against any OpenAI-compatible server, sync and async.

Structured output (`structured` / `astructured`):

1. render the prompt (`schema_json` is passed to the template unless the caller gives it);
2. look the call up in the disk cache (deterministic calls only: temperature 0 or an explicit seed);
3. ask the server with constrained decoding in its dialect: `vllm` and `openai` get
   `response_format={"type": "json_schema", "json_schema": {...}}`; `llamacpp` (llama-cpp-python, which
   rejects json_schema with a 500) gets `{"type": "json_object", "schema": {...}}`;
4. validate the answer with the pydantic model; if it fails, send the answer back with the validation error
   and ask once for a corrected answer; if that fails too, raise `LLMSchemaError`;
5. store the validated answer in the cache and account tokens and time in `client.usage` under `component`.

Transport: connection errors, timeouts and 5xx are retried with exponential backoff (tenacity,
`LLMConfig.max_retries` attempts), then raise `LLMUnavailableError`; 4xx raise `LLMRequestError` at once.
At most `LLMConfig.max_concurrency` requests are in flight per client (a threading semaphore for sync calls, an
asyncio one per event loop for async calls).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import weakref
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Generic, Self, TypeVar

import httpx
import openai
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from schedmate.llm.cache import LLMCache, cache_key, is_cacheable
from schedmate.llm.config import LLMConfig
from schedmate.llm.errors import LLMError, LLMRequestError, LLMSchemaError, LLMUnavailableError
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
class _Prepared:
    prompt: Prompt
    messages: list[dict[str, Any]]
    params: PromptParams
    schema_json: dict[str, Any]
    schema_name: str
    key: str | None
    started: float = field(default_factory=time.monotonic)
    call: CallUsage = field(default_factory=CallUsage)


def _transient(e: BaseException) -> bool:
    if isinstance(e, openai.APIConnectionError):  # includes APITimeoutError
        return True
    return isinstance(e, openai.APIStatusError) and e.status_code >= 500


def _format_errors(e: ValidationError, limit: int = 1500) -> str:
    lines = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(answer)"
        lines.append(f"- {loc}: {err.get('msg')}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "\n- ..."


def _dialect_from_models(data: list[dict[str, Any]]) -> str:
    owners = {str(m.get("owned_by", "")).lower() for m in data if isinstance(m, dict)}
    if "vllm" in owners:
        return "vllm"
    if owners & {"me", "llamacpp", "llama.cpp", "llama-cpp-python"}:
        return "llamacpp"
    return "openai"


class LLMClient:
    """Client of one OpenAI-compatible server. Thread-safe; usable from several event loops."""

    def __init__(
        self,
        config: LLMConfig | None = None,
        *,
        usage: Usage | None = None,
        cache: LLMCache | bool | None = None,
    ) -> None:
        """`cache`: an `LLMCache`, False for none, None to follow `config.cache`."""
        self.config = config if config is not None else LLMConfig.from_env()
        self.usage = usage if usage is not None else Usage()
        if isinstance(cache, LLMCache):
            self.cache: LLMCache | None = cache
        elif cache is False or (cache is None and not self.config.cache):
            self.cache = None
        else:
            self.cache = LLMCache(self.config.resolved_cache_path())
        self._dialect: str | None = None if self.config.dialect == "auto" else self.config.dialect
        self._lock = threading.Lock()
        self._sync: openai.OpenAI | None = None
        self._sem = threading.BoundedSemaphore(self.config.max_concurrency)
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[openai.AsyncOpenAI, asyncio.Semaphore]]
        self._async = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ plumbing

    def _base_url(self) -> str:
        if not self.config.base_url:
            raise LLMUnavailableError(
                "no LLM server configured: set SCHEDMATE_LLM_BASE_URL or start one with `schedmate llm serve`"
            )
        return self.config.base_url

    def _timeout(self) -> openai.Timeout:
        return openai.Timeout(self.config.timeout_s, connect=self.config.connect_timeout_s)

    def _client(self) -> openai.OpenAI:
        with self._lock:
            if self._sync is None:
                self._sync = openai.OpenAI(base_url=self._base_url(), api_key=self.config.api_key,
                                           timeout=self._timeout(), max_retries=0)
            return self._sync

    def _aclient(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.get(loop)
            if entry is None:
                entry = (
                    openai.AsyncOpenAI(base_url=self._base_url(), api_key=self.config.api_key,
                                       timeout=self._timeout(), max_retries=0),
                    asyncio.Semaphore(self.config.max_concurrency),
                )
                self._async[loop] = entry
            return entry

    def _retry_kwargs(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.config.max_retries),
            "wait": wait_exponential(multiplier=self.config.backoff_s, min=self.config.backoff_s, max=8.0),
            "retry": retry_if_exception(_transient),
            "reraise": True,
        }

    def _translate(self, e: Exception) -> LLMError:
        where = self.config.base_url
        if isinstance(e, openai.APIConnectionError):
            return LLMUnavailableError(f"LLM server {where} unreachable after {self.config.max_retries} attempts: {e}")
        if isinstance(e, openai.APIStatusError):
            if e.status_code >= 500:
                return LLMUnavailableError(f"LLM server {where} answered {e.status_code}: {e.message}")
            return LLMRequestError(f"LLM server {where} refused the request ({e.status_code}): {e.message}",
                                   status_code=e.status_code)
        return LLMError(f"LLM call to {where} failed: {e!r}")

    def _create(self, kwargs: dict[str, Any]) -> Any:
        client = self._client()

        def attempt() -> Any:
            with self._sem:
                return client.chat.completions.create(**kwargs)

        try:
            return Retrying(**self._retry_kwargs())(attempt)
        except openai.OpenAIError as e:
            raise self._translate(e) from e

    async def _acreate(self, kwargs: dict[str, Any]) -> Any:
        client, sem = self._aclient()
        try:
            async for attempt in AsyncRetrying(**self._retry_kwargs()):
                with attempt:
                    async with sem:
                        return await client.chat.completions.create(**kwargs)
        except openai.OpenAIError as e:
            raise self._translate(e) from e
        raise AssertionError("unreachable")  # pragma: no cover

    # ------------------------------------------------------------------ dialect

    def dialect(self) -> str:
        """`vllm`, `llamacpp` or `openai`: the configured one, else detected once from the server."""
        if self._dialect is None:
            self._dialect = self._detect_dialect()
        return self._dialect

    async def adialect(self) -> str:
        if self._dialect is None:
            self._dialect = await asyncio.to_thread(self._detect_dialect)
        return self._dialect

    def _detect_dialect(self) -> str:
        base = self._base_url().rstrip("/")
        from schedmate.llm.serving import ENGINES, read_state

        for engine in ENGINES:  # a server we started ourselves says what it is
            state = read_state(engine)
            if state is not None and state.base_url.rstrip("/") == base:
                return state.dialect
        try:
            r = httpx.get(base + "/models", timeout=httpx.Timeout(self.config.timeout_s, connect=self.config.connect_timeout_s),
                          headers={"Authorization": f"Bearer {self.config.api_key}"})
            r.raise_for_status()
            data = r.json().get("data", [])
        except (httpx.HTTPError, ValueError, AttributeError) as e:
            raise LLMUnavailableError(f"LLM server {base} unreachable (GET /models: {e!r})") from e
        return _dialect_from_models(data if isinstance(data, list) else [])

    def models(self) -> list[str]:
        """Model ids the server serves (a health check)."""
        try:
            return [m.id for m in self._client().models.list().data]
        except openai.OpenAIError as e:
            raise self._translate(e) from e

    # ------------------------------------------------------------------ structured output

    def _prepare(
        self,
        prompt: Prompt | str,
        variables: dict[str, Any] | None,
        schema: type[BaseModel],
        overrides: dict[str, Any],
        use_cache: bool,
        dialect: str,
    ) -> _Prepared:
        if isinstance(prompt, str):
            prompt = load_prompt(prompt)
        schema_json = schema.model_json_schema()
        variables = dict(variables or {})
        variables.setdefault("schema_json", json.dumps(schema_json, separators=(",", ":")))
        messages = prompt.render(variables)
        params = prompt.params.model_copy(update={k: v for k, v in overrides.items() if v is not None})
        key = None
        if use_cache and self.cache is not None and is_cacheable(params.temperature, params.seed):
            key = cache_key(prompt_id=prompt.id, prompt_version=prompt.version, messages=messages,
                            model=self.config.model, params=params.model_dump(), schema=schema_json,
                            dialect=dialect)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "answer"
        return _Prepared(prompt, messages, params, schema_json, name, key)

    def _kwargs(self, prep: _Prepared, messages: list[dict[str, Any]], dialect: str) -> dict[str, Any]:
        p = prep.params
        kw: dict[str, Any] = {"model": self.config.model, "messages": messages, "temperature": p.temperature,
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

    def _from_cache(self, prep: _Prepared, schema: type[T], component: str) -> StructuredResult[T] | None:
        if prep.key is None or self.cache is None:
            return None
        hit = self.cache.get(prep.key)
        if hit is None:
            return None
        try:
            raw = str(hit["raw"])
            value = schema.model_validate_json(raw)
        except (KeyError, ValidationError):
            return None  # stale or corrupt entry: a miss
        call = CallUsage(cached=True, seconds=time.monotonic() - prep.started)
        self.usage.record(component, call)
        return StructuredResult(value=value, raw=raw, cached=True, usage=call, component=component,
                                prompt_id=prep.prompt.id, prompt_version=prep.prompt.version,
                                model=self.config.model, finish_reason=hit.get("finish_reason"))

    @staticmethod
    def _account(call: CallUsage, response: Any) -> tuple[str, str | None]:
        call.requests += 1
        u = getattr(response, "usage", None)
        if u is not None:
            call.prompt_tokens += int(getattr(u, "prompt_tokens", 0) or 0)
            call.completion_tokens += int(getattr(u, "completion_tokens", 0) or 0)
        choice = response.choices[0]
        return choice.message.content or "", choice.finish_reason

    @staticmethod
    def _check(schema: type[T], raw: str, finish: str | None) -> tuple[T | None, str]:
        try:
            return schema.model_validate_json(raw), ""
        except ValidationError as e:
            errors = _format_errors(e)
            if finish == "length":
                errors += "\n- the answer was cut off at max_tokens; keep it shorter"
            return None, errors

    def _repair_messages(self, prep: _Prepared, raw: str, errors: str) -> list[dict[str, Any]]:
        return [*prep.messages, {"role": "assistant", "content": raw[:4000]},
                {"role": "user", "content": _REPAIR.format(errors=errors)}]

    def _done(self, prep: _Prepared, schema: type[T], component: str, call: CallUsage, value: T | None,
              raw: str, errors: str, finish: str | None) -> StructuredResult[T]:
        call.seconds = time.monotonic() - prep.started
        if value is None:
            self.usage.record(component, call, failed=True)
            raise LLMSchemaError(
                f"prompt {prep.prompt.id!r} v{prep.prompt.version}: answer does not match {schema.__name__} "
                f"after {call.requests} attempt(s):\n{errors}\nlast answer: {raw[:300]!r}",
                raw=raw, errors=errors, prompt_id=prep.prompt.id, attempts=call.requests,
            )
        self.usage.record(component, call)
        if prep.key is not None and self.cache is not None:
            self.cache.put(prep.key, {"raw": raw, "finish_reason": finish, "prompt_tokens": call.prompt_tokens,
                                      "completion_tokens": call.completion_tokens},
                           prompt_id=prep.prompt.id, model=self.config.model)
        return StructuredResult(value=value, raw=raw, cached=False, usage=call, component=component,
                                prompt_id=prep.prompt.id, prompt_version=prep.prompt.version,
                                model=self.config.model, finish_reason=finish)

    def _fail(self, component: str, call: CallUsage, started: float) -> None:
        call.seconds = time.monotonic() - started
        self.usage.record(component, call, failed=True)

    def _ask(self, prep: _Prepared, schema: type[T], component: str, dialect: str,
             ) -> Generator[dict[str, Any], Any, StructuredResult[T]]:
        """The structured-call protocol without I/O, shared by `structured` and `astructured`: yields the
        request kwargs for each attempt (the first, then at most one repair), is sent the response,
        and returns the result (or raises `LLMSchemaError`). The caller sends the responses and turns
        an `LLMError` from its transport into `_fail`."""
        hit = self._from_cache(prep, schema, component)
        if hit is not None:
            return hit
        call = prep.call
        raw, finish = self._account(call, (yield self._kwargs(prep, prep.messages, dialect)))
        value, errors = self._check(schema, raw, finish)
        if value is None:
            call.repaired = True
            msgs = self._repair_messages(prep, raw, errors)
            raw, finish = self._account(call, (yield self._kwargs(prep, msgs, dialect)))
            value, errors = self._check(schema, raw, finish)
        return self._done(prep, schema, component, call, value, raw, errors, finish)

    def _start(self, prompt: Prompt | str, variables: dict[str, Any] | None, schema: type[Any],
               params: dict[str, Any], use_cache: bool, dialect: str, started: float) -> _Prepared:
        prep = self._prepare(prompt, variables, schema, params, use_cache, dialect)
        prep.started = started
        prep.call = CallUsage()
        return prep

    def structured(
        self,
        prompt: Prompt | str,
        variables: dict[str, Any] | None = None,
        *,
        schema: type[T],
        component: str = "default",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        top_p: float | None = None,
        use_cache: bool = True,
    ) -> StructuredResult[T]:
        """Ask `prompt` (a `Prompt` or a prompt id) and return a value of `schema`.

        Decoding parameters default to the prompt's `params`; the keyword arguments override them.
        Raises `LLMSchemaError`, `LLMUnavailableError`, `LLMRequestError` (all `LLMError`).
        """
        started = time.monotonic()
        params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "top_p": top_p}
        prep = None
        try:
            dialect = self.dialect()
            prep = self._start(prompt, variables, schema, params, use_cache, dialect, started)
            flow = self._ask(prep, schema, component, dialect)
            request = next(flow)
            while True:
                request = flow.send(self._create(request))
        except StopIteration as done:
            return done.value
        except LLMError as e:
            if not isinstance(e, LLMSchemaError):
                self._fail(component, prep.call if prep is not None else CallUsage(), started)
            raise

    async def astructured(
        self,
        prompt: Prompt | str,
        variables: dict[str, Any] | None = None,
        *,
        schema: type[T],
        component: str = "default",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        top_p: float | None = None,
        use_cache: bool = True,
    ) -> StructuredResult[T]:
        """Async twin of `structured` (the cache lookup and write are short blocking SQLite calls)."""
        started = time.monotonic()
        params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "top_p": top_p}
        prep = None
        try:
            dialect = await self.adialect()
            prep = self._start(prompt, variables, schema, params, use_cache, dialect, started)
            flow = self._ask(prep, schema, component, dialect)
            request = next(flow)
            while True:
                request = flow.send(await self._acreate(request))
        except StopIteration as done:
            return done.value
        except LLMError as e:
            if not isinstance(e, LLMSchemaError):
                self._fail(component, prep.call if prep is not None else CallUsage(), started)
            raise

    # ------------------------------------------------------------------ plain chat / tools

    def _chat_kwargs(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                     tool_choice: Any, temperature: float, max_tokens: int, extra: dict[str, Any]) -> dict[str, Any]:
        kw: dict[str, Any] = dict(model=self.config.model, messages=messages, temperature=temperature,
                                  max_tokens=max_tokens, **extra)
        if tools:
            kw["tools"] = tools
            if tool_choice is not None:
                if isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "required"):
                    tool_choice = {"type": "function", "function": {"name": tool_choice}}
                kw["tool_choice"] = tool_choice
        return kw

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | dict[str, Any] | None = None,
        component: str = "chat",
        temperature: float = 0.0,
        max_tokens: int = 512,
        **extra: Any,
    ) -> Any:
        """One chat round trip, uncached; returns the raw assistant message (`.content`, `.tool_calls`).

        `tools` are OpenAI function specs; `tool_choice` is "auto", "none", "required", a function name (forces
        that call) or an OpenAI tool_choice dict. Append the message and `{"role": "tool", "tool_call_id": ...,
        "content": ...}` answers to `messages` and call again to continue the loop.
        """
        started = time.monotonic()
        call = CallUsage()
        try:
            response = self._create(self._chat_kwargs(messages, tools, tool_choice, temperature, max_tokens, extra))
        except LLMError:
            self._fail(component, call, started)
            raise
        self._account(call, response)
        call.seconds = time.monotonic() - started
        self.usage.record(component, call)
        return response.choices[0].message

    async def achat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | dict[str, Any] | None = None,
        component: str = "chat",
        temperature: float = 0.0,
        max_tokens: int = 512,
        **extra: Any,
    ) -> Any:
        """Async twin of `chat`."""
        started = time.monotonic()
        call = CallUsage()
        try:
            response = await self._acreate(
                self._chat_kwargs(messages, tools, tool_choice, temperature, max_tokens, extra))
        except LLMError:
            self._fail(component, call, started)
            raise
        self._account(call, response)
        call.seconds = time.monotonic() - started
        self.usage.record(component, call)
        return response.choices[0].message

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync.close()
                self._sync = None

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.pop(loop, None)
        if entry is not None:
            await entry[0].close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
