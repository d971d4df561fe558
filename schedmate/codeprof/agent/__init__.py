"""An agent for what the static pass leaves open: tool calls (list, grep, read) against the local model,
answers that must cite `file:line`, never overriding a static fact. Needs the `agent` extra (LangChain).

    from schedmate.codeprof.agent import analyze_with_agent
    profile = analyze_with_agent("path/to/job", command="bash train.sh")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedmate.codeprof.agent.loop import AGENT_FIELDS, AgentOutcome, run_agent, verify_answer
from schedmate.codeprof.agent.tools import JobFiles, ToolRefused
from schedmate.codeprof.facts import CodeProfile, Fact


def analyze_with_agent(workdir: str | Path, command: str | None = None, env: dict[str, str] | None = None,
                       max_steps: int = 6, **agent_options: Any) -> CodeProfile:
    """The static profile, with the fields it left null filled by the agent's verified, cited answers."""
    from schedmate.codeprof.analyzer import analyze_code
    from schedmate.codeprof.derive import derive

    prof = analyze_code(workdir, command=command, env=env, use_llm=False)
    open_fields = [f for f in AGENT_FIELDS if prof.value(f) is None]
    known = {f: prof.value(f) for f in (*AGENT_FIELDS, "params", "model_name")}
    outcome = run_agent(workdir, open_fields, known, max_steps=max_steps, **agent_options)
    facts = dict(prof.facts)
    for name, (value, cite) in outcome.values.items():
        if facts.get(name) is None or facts[name].value is None:  # never over a static fact
            facts[name] = Fact(value=value, source="llm", evidence=[cite], note="agent answer, cited line verified")
    if outcome.values:
        derive(facts)  # e.g. a global batch from a newly found GPU count
    warnings = [w for w in prof.warnings if not any(w.startswith(f"{f}:") for f in outcome.values)]
    warnings += outcome.warnings + [f"agent refused: {r}" for r in outcome.rejected]
    extras = {**prof.extras, "agent": {"llm_calls": outcome.llm_calls, "steps": outcome.steps,
                                       "seconds": round(outcome.seconds, 2)}}
    return CodeProfile(facts=facts, extras=extras, warnings=warnings, llm_calls=prof.llm_calls + outcome.llm_calls)


__all__ = ["AGENT_FIELDS", "AgentOutcome", "JobFiles", "ToolRefused", "analyze_with_agent", "run_agent",
           "verify_answer"]
