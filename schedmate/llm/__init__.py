"""The LLM layer: one client for any OpenAI-compatible server, versioned prompts, a disk cache, local serving.

Public API (stable; other components code against exactly this)::

    from schedmate.llm import LLMClient, LLMConfig, LLMError, LLMSchemaError, LLMUnavailableError, load_prompt

    client = LLMClient(LLMConfig.from_env())       # or LLMConfig(base_url="http://127.0.0.1:8101/v1", model=...)
    prompt = load_prompt("code_profile")            # prompts/code_profile.md -> Prompt(id, version, params, schema_name, body)
    result = client.structured(prompt, variables={"script": text}, schema=MyModel, component="code")
    result.value          # a validated MyModel
    result.cached         # True when answered from the disk cache (then result.usage has zero tokens)
    result.raw            # the JSON text the model produced
    result.usage          # CallUsage(requests, prompt_tokens, completion_tokens, seconds, cached, repaired)
    result.provenance()   # records.Provenance for the annotation
    result = await client.astructured(prompt, variables={...}, schema=MyModel, component="code")
    client.usage.summary()  # {"code": {"calls", "cache_hits", "requests", "repairs", "failures",
                            #           "prompt_tokens", "completion_tokens", "seconds"}, ...}
    msg = client.chat(messages, tools=[...], tool_choice="read_file")   # raw assistant message, for tool loops

Errors: every failed call raises an `LLMError`; catch it to fall back (and document the fallback):
`LLMUnavailableError` (no server configured, unreachable, timeout, 5xx after retries), `LLMSchemaError` (the
answer broke the schema even after one repair round; `.raw`, `.errors`, `.attempts`), `LLMRequestError`
(4xx). Prompt-file problems raise `PromptError` subclasses (a `ValueError`, deliberately not an `LLMError`).

Configuration (`LLMConfig.from_env`): `SCHEDMATE_LLM_BASE_URL`, `SCHEDMATE_LLM_MODEL`, `SCHEDMATE_LLM_API_KEY`
(default `sk-local`), `SCHEDMATE_LLM_DIALECT` (`auto`|`vllm`|`llamacpp`|`openai`; auto asks the server), and
without a base URL the server started by `schedmate llm serve`, if one is up. Cache:
`$SCHEDMATE_HOME/cache/llm.sqlite` (`SCHEDMATE_LLM_CACHE=0` disables it); only temperature-0 or seeded calls
are cached. Prompt format: `prompts/README.md` and `schedmate.llm.prompts`. Local servers:
`schedmate.llm.serving` and `schedmate llm --help`.

Modules: `client` (LLMClient), `structured` (the structured-output protocol, StructuredResult), `transport`
(requests, retries, dialect), `config`, `prompts`, `cache`, `usage`, `serving`, `cli`, `errors`.
"""

import importlib
from typing import TYPE_CHECKING, Any

# Where each public name lives. Loaded on first use (PEP 562), so that `schedmate llm status`, the other
# commands and `import schedmate.llm.errors` do not pay for the OpenAI client's import (a second or more).
_HOME = {
    "LLMCache": "cache",
    "LLMClient": "client",
    "StructuredResult": "client",
    "LLMConfig": "config",
    **dict.fromkeys(("LLMError", "LLMRequestError", "LLMSchemaError", "LLMUnavailableError", "PromptError",
                     "PromptFormatError", "PromptNotFoundError", "PromptRenderError"), "errors"),
    **dict.fromkeys(("Prompt", "PromptParams", "load_prompt", "prompt_fingerprint"), "prompts"),
    **dict.fromkeys(("CallUsage", "ComponentUsage", "Usage"), "usage"),
}

if TYPE_CHECKING:
    from schedmate.llm.cache import LLMCache
    from schedmate.llm.client import LLMClient, StructuredResult
    from schedmate.llm.config import LLMConfig
    from schedmate.llm.errors import (
        LLMError,
        LLMRequestError,
        LLMSchemaError,
        LLMUnavailableError,
        PromptError,
        PromptFormatError,
        PromptNotFoundError,
        PromptRenderError,
    )
    from schedmate.llm.prompts import Prompt, PromptParams, load_prompt, prompt_fingerprint
    from schedmate.llm.usage import CallUsage, ComponentUsage, Usage


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'schedmate.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"schedmate.llm.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CallUsage",
    "ComponentUsage",
    "LLMCache",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMRequestError",
    "LLMSchemaError",
    "LLMUnavailableError",
    "Prompt",
    "PromptError",
    "PromptFormatError",
    "PromptNotFoundError",
    "PromptParams",
    "PromptRenderError",
    "StructuredResult",
    "Usage",
    "load_prompt",
    "prompt_fingerprint",
]
