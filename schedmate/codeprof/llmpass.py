"""The LLM pass: ask the model for the fields the static pass left open, then sanity-check the answers.

* A ranked context pack (command, entry-script head and docstring, the regions most relevant to the open
  fields, model definitions, argparse, referenced configs) within a token budget, every line numbered
  `file:line| text`, wrapped in <<<JOB ... JOB>>> with the instruction that it is untrusted data.
* Few fields per call (at most `FIELDS_PER_CALL`), each with a typed, bounded schema built for that call.
* Optional reading loop (`tool_budget` > 0): the model may call `list_files` and `read_file(path, start,
  end)` before answering; what it reads is added to the pack (within the budget).
* Optional self-consistency: `samples` > 1 asks k times (temperature 0.7, seeds seed..seed+k-1) and keeps a
  value only when a strict majority agrees.
* Reconcile (`LLMOutcome.merged`): static facts always win; an LLM value only fills an empty field, only
  within bounds, only when it is grounded (numbers must appear in the excerpt, in prose form for
  parameter counts) and consistent with the static topology. Rejections are listed in `extras`.
* Failure: server down, schema broken twice, or a bad answer -> the field stays null, a warning says why.

Modules: `llm_fields` (askable fields, schemas, budgets), `llm_context` (the pack), `llm_checks` (which
fields, grounding, vote), `llm_reading` (the reading loop); this one drives them and reconciles.
"""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.llm_checks import (
    _known_summary,
    _vote,
    check_answer,
    open_fields,
)
from schedmate.codeprof.llm_context import (
    build_context,
)
from schedmate.codeprof.llm_fields import (
    ASKABLE,
    FIELDS_PER_CALL,
    PROMPT_ID,
    TOKEN_BUDGET,
    LLMOutcome,
    field_model,
)
from schedmate.codeprof.llm_reading import _reading_loop, _tokens, _tokens_delta
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.static import StaticResult


def run_llm_pass(
    res: StaticResult,
    wd: Workdir,
    client: Any = None,
    samples: int = 1,
    seed: int | None = None,
    prompt_version: str | None = None,
    tool_budget: int = 0,
    fields: list[str] | None = None,
    budget_tokens: int = TOKEN_BUDGET,
    raw: bool = False,
) -> LLMOutcome:
    """Ask for `fields` (default: the open ones). `raw=True` (the evaluation's LLM-only mode) gives the model
    no
    static facts and keeps its answers unchecked (schema bounds only)."""
    from schedmate.llm import LLMClient, LLMConfig, LLMError, load_prompt

    out = LLMOutcome()
    want = fields if fields is not None else open_fields(res, wd)
    out.extras["llm_fields_asked"] = list(want)
    if not want:
        return out
    try:
        prompt = load_prompt(PROMPT_ID if prompt_version is None else _prompt_id_for(prompt_version))
    except (
        Exception
    ) as e:  # a broken prompt file is a programming error: say it loudly, but keep static facts
        out.warnings.append(f"LLM pass skipped: prompt {PROMPT_ID} v{prompt_version}: {e}")
        return out
    out.extras["prompt_version"] = prompt.version
    try:
        client = client or LLMClient(LLMConfig.from_env())
    except LLMError as e:
        out.warnings.append(f"LLM pass skipped ({e}); static profile only")
        return out
    extra_regions: list[tuple[str, int, int]] = []
    if tool_budget > 0:
        extra_regions = _reading_loop(client, res, wd, want, tool_budget, out)
    context, included = build_context(res, wd, want, budget_tokens, extra_regions)
    out.extras["context_files"] = included
    out.extras["context_chars"] = len(context)
    usage_before = _tokens(client)
    for i in range(0, len(want), FIELDS_PER_CALL):
        chunk = want[i : i + FIELDS_PER_CALL]
        schema = field_model(chunk)
        variables = {
            "known": {} if raw else _known_summary(res),
            "context": context,
            "fields": [n.replace(".", "_") for n in chunk],
        }
        answers: list[dict[str, Any]] = []
        k = max(1, samples)
        for s in range(k):
            overrides: dict[str, Any] = {}
            if k > 1:
                overrides = {"temperature": 0.7, "seed": (seed or 0) + s}
            elif seed is not None:
                overrides = {"seed": seed}
            try:
                r = client.structured(
                    prompt, variables=variables, schema=schema, component="code", **overrides
                )
            except LLMError as e:
                out.warnings.append(
                    f"LLM call failed ({type(e).__name__}: {str(e)[:160]}); "
                    f"fields {', '.join(chunk)} stay as the static pass left them"
                )
                if "Unavailable" in type(e).__name__:
                    out.extras.update(_tokens_delta(client, usage_before))
                    return out
                continue
            out.calls += 0 if r.cached else r.usage.requests
            answers.append(r.value.model_dump())
        for n in chunk:
            key = n.replace(".", "_")
            value = _vote([a.get(key) for a in answers]) if answers else None
            if raw:
                if value is not None:
                    out.answers[n] = Fact(
                        value=value, source="llm", evidence=list(included[:1]), note="unchecked"
                    )
                continue
            v, ev, why = check_answer(n, value, res, context)
            if why:
                out.rejected[n] = why
            elif v is not None:
                out.answers[n] = Fact(
                    value=v,
                    source="llm",
                    evidence=ev or list(included[:1]),
                    note=None if ev else "not located in the excerpt",
                )
    out.extras.update(_tokens_delta(client, usage_before))
    if out.rejected:
        out.extras["llm_rejected"] = dict(out.rejected)
    return out


def _prompt_id_for(version: str) -> str:
    from schedmate.llm import load_prompt

    try:
        p = load_prompt(PROMPT_ID)
        if p.version == str(version):
            return PROMPT_ID
    except Exception:
        pass
    return f"{PROMPT_ID}.v{version}"


__all__ = ["ASKABLE", "FIELDS_PER_CALL", "PROMPT_ID", "LLMOutcome", "_vote", "build_context", "check_answer", "field_model", "open_fields", "run_llm_pass"]
