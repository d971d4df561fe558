"""`analyze_code`: static pass -> (optional) LLM pass -> reconcile -> derive, with the version cache."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from schedmate.codeprof.derive import derive
from schedmate.codeprof.facts import CodeProfile, Fact
from schedmate.codeprof.llm_checks import token_budget
from schedmate.codeprof.mm_accumulation import apply_update_interval
from schedmate.codeprof.named_model_table import named_model_params
from schedmate.codeprof.named_sizes import fill_params
from schedmate.codeprof.readme_params import params_fact
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.static import StaticResult, run_static
from schedmate.codeprof.static.length_help import recheck_run_length
from schedmate.codeprof.static.deepspeed_batch_check import check_deepspeed_batch
from schedmate.codeprof.static.hugectr_solver import hugectr_solver
from schedmate.codeprof.static.unfixed_batches import unfixed_batches
from schedmate.codeprof.static.random_settings import drop_random_settings
from schedmate.codeprof.static.reference_world import rescale_to_world
from schedmate.codeprof.static.rl_run_length import rl_run_length


class AnalyzeError(ValueError):
    """Bad input for the analyzer (no command, unreadable entry script, ...), with a clear message."""


def job_command(workdir: Path, command: str | None) -> str:
    """The command to analyze: the one given, else `command.txt` in the workdir."""
    if command and command.strip():
        return command.strip()
    p = Path(workdir) / "command.txt"
    if p.is_file() and not p.is_symlink():
        text = p.read_text(errors="replace").strip()
        if text:
            return text.splitlines()[0] if "\\\n" not in text else text
    raise AnalyzeError(f"no --command given and no command.txt in {workdir}")


def job_env(workdir: Path, env: dict[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    p = Path(workdir) / "env.json"
    if p.is_file() and not p.is_symlink():
        try:
            data = json.loads(p.read_text())
            if isinstance(data, dict):
                out.update({str(k): str(v) for k, v in data.items()})
        except json.JSONDecodeError as e:
            raise AnalyzeError(f"{p}: line {e.lineno}: not valid JSON: {e.msg}") from e
    out.update(env or {})
    return out


def static_profile(
    workdir: str | Path,
    command: str | None = None,
    env: dict[str, str] | None = None,
    launcher_config: str | None = None,
    wd: Workdir | None = None,
    py_cache: Any = None,
) -> tuple[StaticResult, Workdir]:
    wd = wd or Workdir(Path(workdir))
    cmd = job_command(wd.root, command)
    res = run_static(wd, cmd, job_env(wd.root, env), launcher_config, py_cache=py_cache)
    return res, wd


SCHEDULER_FIELDS = ("params", "global_batch_size", "micro_batch_size", "num_gpus", "train_steps", "epochs")


def null_reasons(facts: dict[str, Fact], res: StaticResult, warnings: list[str]) -> list[str]:
    """A warning for each field a scheduler needs that stayed null, saying why (unless one already does)."""
    said = " ".join(warnings)
    out: list[str] = []

    def have(name: str) -> bool:
        return facts.get(name) is not None and facts[name].value is not None

    unknown = dict(res.launch.unknown) if res.launch is not None else {}
    open_vars = sorted({v for k in ("num_procs", "procs_per_node", "num_nodes", "gpus_per_node")
                        for v in unknown.get(k, [])})
    said_vars = ", ".join(f"${v}" if v.isidentifier() else v for v in open_vars)
    reasons = {
        "num_gpus": (f"set at submission: {said_vars}, with no value in the sources" if open_vars
                     else "the launch command and the code do not fix the GPU count (decided at submission)"),
        "train_steps": ("the run length is given in epochs; steps depend on the dataset size" if have("epochs")
                        else "no step count in the sources read"),
        "epochs": ("the run length is given in steps" if have("train_steps")
                   else "no epoch count in the sources read"),
        "micro_batch_size": "no per-device batch size in the sources read",
        "global_batch_size": ("micro x accumulation x data-parallel size, and the GPU count is open"
                              if have("micro_batch_size") and not have("num_gpus")
                              else "not stated, and not derivable from the sources read"),
        "params": "no model config with its dimensions and no well-known model name in the sources read",
    }
    if (budget := token_budget(res)) is not None:
        reasons["micro_batch_size"] = reasons["global_batch_size"] = (
            f"batches are filled to a token budget ({budget[0]} {budget[1]}): sequences per batch vary")
    for name in SCHEDULER_FIELDS:
        if not have(name) and f"{name}:" not in said:
            out.append(f"{name}: unknown: {reasons[name]}")
    return out


def fill_from_candidates(facts: dict[str, Fact], res: StaticResult) -> list[str]:
    """Fill the fields still null after derivation from the static pass's candidates when the evidence is
    strong (`candidates.decide`); one warning per fill naming the candidate."""
    from schedmate.codeprof.candidates import FIELDS, decide
    from schedmate.codeprof.static.rl_env_steps import without_env_step_counts

    have = {f for f in FIELDS if facts.get(f) is not None and facts[f].value is not None}
    out: list[str] = []
    framework = facts["framework"].value if facts.get("framework") is not None else None
    for fill in decide(without_env_step_counts(res.candidates, res.py), have, framework):
        facts[fill.field] = Fact(value=fill.value, source="static", evidence=[fill.chosen.where],
                                 note=f"read from a candidate named {fill.chosen.name!r}")
        out.append(fill.warning())
    return out


def finish(
    facts: dict[str, Fact],
    res: StaticResult,
    wd: Workdir,
    warnings: list[str],
    llm_calls: int = 0,
    extra: dict[str, Any] | None = None,
    candidates: bool = True,
) -> CodeProfile:
    facts = recheck_run_length({k: v.model_copy(deep=True) for k, v in facts.items()}, res)
    stated = params_fact(res.configs, res.launch.args if res.launch else [], wd)  # the config's README row
    if stated is not None and (facts.get("params") is None or facts["params"].source != "llm"):
        facts["params"] = stated  # the authors' count of the whole model beats an estimate from dims
    if (facts.get("params") is None or facts["params"].value is None) and (named := named_model_params(
            res.launch.args if res.launch else [], res.params, res.entry, wd)):  # the named architecture's row
        facts["params"] = named
    warnings = [*warnings, *apply_update_interval(facts, res.params, wd), *rescale_to_world(facts, res),
                *hugectr_solver(facts, res)]
    extras = derive(facts, res.dims, res.accum_knob)
    if fill_params(facts, res):  # an architecture or size named by a setting, when nothing counted the model
        extras = derive(facts, res.dims, res.accum_knob)
    if candidates and res.candidates and (filled := fill_from_candidates(facts, res)):
        warnings = [*warnings, *filled]
        extras = derive(facts, res.dims, res.accum_knob)  # a filled micro batch gives the global one
    if rl_changed := [*rl_run_length(facts, res), *drop_random_settings(facts, res)]:  # fills are checked too
        warnings = [*warnings, *rl_changed]
    if ds_changed := [*check_deepspeed_batch(facts), *unfixed_batches(facts, res)]:
        warnings = [*warnings, *ds_changed]
        extras = derive(facts, res.dims, res.accum_knob)  # the engine's micro batch, when the GPU count is known
    extras["files_read"] = sorted(wd.hashes)
    if wd.skipped:
        extras["files_skipped"] = dict(sorted(wd.skipped.items()))
    if res.launch is not None:
        extras["launcher"] = res.launch.chain
        extras["entry_script"] = res.entry
    extras.update(extra or {})
    notes = [*res.notes, *warnings]
    notes += null_reasons(facts, res, notes)
    return CodeProfile(facts=facts, extras=extras, warnings=notes, llm_calls=llm_calls)


def analyze_code(
    workdir: str | Path,
    command: str | None = None,
    env: dict[str, str] | None = None,
    launcher_config: str | None = None,
    use_llm: bool = True,
    client: Any = None,
    cache: Any = None,
    samples: int = 1,
    seed: int | None = None,
    prompt_version: str | None = None,
    tool_budget: int = 0,
    candidates: bool = True,
) -> CodeProfile:
    """Profile one job. Never executes job files. With `use_llm`, fields the static pass left open are
    asked of the LLM; if the server is down the static profile is returned with a warning. With
    `candidates`, a field still null at the end is filled from a named number of the sources when the
    evidence is strong (`codeprof/candidates.py`), with a warning naming it."""
    t0 = time.perf_counter()
    if cache is not None:
        return cache.analyze(
            workdir,
            command=command,
            env=env,
            launcher_config=launcher_config,
            use_llm=use_llm,
            client=client,
            samples=samples,
            seed=seed,
            prompt_version=prompt_version,
            tool_budget=tool_budget,
            candidates=candidates,
        )
    res, wd = static_profile(workdir, command, env, launcher_config)
    warnings: list[str] = []
    facts = dict(res.facts)
    calls = 0
    extra: dict[str, Any] = {}
    if use_llm:
        from schedmate.codeprof.llmpass import run_llm_pass

        outcome = run_llm_pass(
            res,
            wd,
            client=client,
            samples=samples,
            seed=seed,
            prompt_version=prompt_version,
            tool_budget=tool_budget,
        )
        facts = outcome.merged(facts)
        calls = outcome.calls
        warnings.extend(outcome.warnings)
        extra.update(outcome.extras)
    extra["seconds"] = round(time.perf_counter() - t0, 3)
    return finish(facts, res, wd, warnings, calls, extra, candidates=candidates)
