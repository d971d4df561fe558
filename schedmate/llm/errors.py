"""Typed errors of the LLM layer.

Callers that can work without the LLM catch `LLMError` (or one of its subclasses) and fall back; each
fallback must be documented by the caller. Prompt-file problems are *not* `LLMError`s: a broken prompt
template is a programming error and should fail loudly, so they derive from `PromptError(ValueError)`.
"""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base class of every failure of an LLM call: catch it to fall back to a non-LLM path."""


class LLMUnavailableError(LLMError):
    """No answer from the server: not configured, connection refused, timeout, or 5xx after retries."""


class LLMRequestError(LLMError):
    """The server refused the request (4xx: unknown model, context too long, bad parameters)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMSchemaError(LLMError):
    """The answer did not validate against the output schema, even after one repair attempt.

    `raw` is the last answer text, `errors` the last validation error message, `attempts` the number of
    requests made (2 when the repair was tried).
    """

    def __init__(self, message: str, *, raw: str, errors: str, prompt_id: str | None, attempts: int) -> None:
        super().__init__(message)
        self.raw = raw
        self.errors = errors
        self.prompt_id = prompt_id
        self.attempts = attempts


class PromptError(ValueError):
    """Base class of prompt-file problems (missing id, bad front-matter, undefined template variable)."""


class PromptNotFoundError(PromptError):
    pass


class PromptFormatError(PromptError):
    pass


class PromptRenderError(PromptError):
    pass


class ServeError(RuntimeError):
    """A local model server could not be installed, started or stopped; the message says why."""
