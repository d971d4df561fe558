"""Run length of jobs that step environments: what their `epochs` and step counts count.

An online RL job trains on the experience it collects, not on a dataset, so four readings that hold elsewhere
do not hold there:

* **Epochs are not passes over a dataset.** Where the job also states an environment-interaction budget or a
  rollout (`frames`, `total_timesteps`, `train_for_env_steps`, `steps_per_epoch`, `rollout`), its `epochs` are
  either PPO's passes over each collected rollout (`--epochs 4`, "number of epochs for PPO") or logging blocks
  of a fixed number of environment steps (`sac(steps_per_epoch=4000, epochs=50)`). Either way the field stays
  null: a wrong number is worse.
* **An on-policy learner's step count is not its optimizer steps.** With parallel environments, a rollout
  length and a minibatch count (`num_envs`, `n_steps`, `n_minibatch`), one rollout trains for its epochs over
  its minibatches; a `num_train_steps` or a computed `num_updates` counts environment steps or rollouts. Only
  the product (rollouts in the budget x update epochs x minibatches, `rl_batch.rollout_updates`) is the
  optimizer step count; any other count is dropped (A2C/ACKTR update once per rollout and keep theirs).
* **A step option documented as environment steps** ("Number of env steps to run.") is one, whatever its name.
* **An IMPALA-style budget is in environment steps.** When the learner's batch is `batch_size` unrolls of
  `unroll_length` steps (`rl_batch.unroll_batch`), each learner step consumes that many environment steps, so
  a `total_steps`/`total_frames` budget is that many learner steps times the transitions per step.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.facts import Fact
from schedmate.codeprof.static.length_help import option_at
from schedmate.codeprof.static.result import StaticResult
from schedmate.codeprof.static.rl_batch import unroll_batch
from schedmate.codeprof.static.rl_env_steps import steps_environments

# a budget of environment interaction, or the length of one collected rollout
_ENV_BUDGET = re.compile(
    r"^(?:(?:total|num|n|max|train_for)_)?(?:env_|environment_)?(?:frames|timesteps|env_steps|environment_steps)"
    r"(?:_per_(?:proc|env|worker))?$|^train_for_env_steps$|^steps_per_epoch$|^rollouts?(?:_len(?:gth)?)?$|"
    r"^unroll_len(?:gth)?$|^num_steps_per_rollout$", re.IGNORECASE)
_ENVS = re.compile(r"^(?:num_|n_)?(?:train_|parallel_)?envs?$|^num_processes$|^nenvs?$|^num_envs_per_worker$",
                   re.IGNORECASE)
_ROLLOUT = re.compile(r"^(?:num_|n_)?steps$|^nsteps$|^num_steps_per_(?:rollout|update)$|^rollout(?:_len(?:gth)?)?$",
                      re.IGNORECASE)
_MINIBATCHES = re.compile(r"^(?:num_|n_)?mini_?batch(?:es)?$|^nminibatches$|^num_mini_batches$|"
                          r"^num_batches_per_epoch$", re.IGNORECASE)
_TOTAL = re.compile(r"^(?:total|num)_(?:timesteps|env_steps|frames)$", re.IGNORECASE)
_UPDATE_EPOCHS = re.compile(r"^(?:update_epochs|ppo_epochs?|epoch_ppo|num_sgd_iter|n_epochs|epochs)$", re.IGNORECASE)
_WHOLE_ROLLOUT_ALGOS = {"a2c", "acktr"}
# an option's help that says it counts interaction with the environment
_ENV_STEP_HELP = re.compile(r"\b(?:env(?:ironment)?|actor|agent)[- ](?:steps|interactions|frames)\b|"
                            r"\b(?:time ?steps|frames) (?:in|of|from) the env", re.IGNORECASE)
# an IMPALA learner's budget in environment steps
_UNROLL_BUDGET = ("total_steps", "total_frames", "total_env_steps", "num_env_steps", "total_environment_frames")


def _leaf(name: str) -> str:
    return name.strip().lstrip("-$").replace("-", "_").rsplit(".", 1)[-1].lower()


def _names(res: StaticResult) -> set[str]:
    """Every setting name the job's files give: parsed settings, function parameters and call keywords (a
    `parser.set_defaults(rollout=64, ...)` or `def sac(steps_per_epoch=4000, epochs=100)`)."""
    out = {_leaf(k) for k, _ in res.params.items()}
    for s in res.py.values():
        out.update(_leaf(p) for f in s.get("functions", []) for p in f.get("params", []))
        out.update(_leaf(k) for c in s.get("calls", []) for k in c.get("kwargs", {}))
    return out


def _first(params: Any, pattern: re.Pattern[str]) -> Any:
    return next((pv for k, pv in params.items() if pattern.match(_leaf(k)) and _positive(pv.value)), None)


def _positive(v: Any) -> int | None:
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if n > 0 and n == v else None


def _rollout_product(params: Any, envs: Any, rollout: Any, minib: Any) -> int | None:
    """Rollouts in the stated environment-step budget x update epochs x minibatches, or None."""
    total, epochs = _first(params, _TOTAL), _first(params, _UPDATE_EPOCHS)
    if total is None or epochs is None:
        return None
    per_rollout = _positive(envs.value) * _positive(rollout.value)  # type: ignore[operator]
    return int(total.value) // per_rollout * int(epochs.value) * int(minib.value)


def _drop(facts: dict[str, Fact], name: str, why: str, out: list[str]) -> None:
    out.append(f"{name}: {facts[name].value} dropped: {why}")
    del facts[name]


def rl_run_length(facts: dict[str, Fact], res: StaticResult) -> list[str]:
    """Apply the four readings above to `facts` (in place); one warning per changed field."""
    out: list[str] = []
    if not steps_environments(res.py):
        return out

    def have(name: str) -> bool:
        return facts.get(name) is not None and facts[name].value is not None

    names = _names(res)
    if have("epochs") and (budget := sorted(n for n in names if _ENV_BUDGET.match(n))):
        _drop(facts, "epochs", f"the job steps environments and states {budget[0]!r}: its epochs are passes over "
              "collected rollouts or blocks of environment steps, not passes over a dataset", out)
    if not have("train_steps"):
        return out
    steps = facts["train_steps"]
    # the option's own value taken as the steps (`num_updates = num_env_steps // ...` computed from it is not)
    helps = [o.get("help") or "" for w in steps.evidence if (o := option_at(res, w)) is not None
             and (pv := res.params.get(str(o.get("dest") or ""))) is not None and pv.value == steps.value]
    if any(_ENV_STEP_HELP.search(h) for h in helps):
        _drop(facts, "train_steps", "the option it comes from is documented as counting environment steps, "
              "not optimizer steps", out)
        return out
    p = res.params
    envs, rollout, minib = _first(p, _ENVS), _first(p, _ROLLOUT), _first(p, _MINIBATCHES)
    algo = p.get("algo") or p.get("algorithm")
    whole = algo is not None and str(algo.value).lower() in _WHOLE_ROLLOUT_ALGOS
    if envs is not None and rollout is not None and minib is not None and not whole:
        if steps.value != _rollout_product(p, envs, rollout, minib):
            _drop(facts, "train_steps", "an on-policy learner over parallel environments trains each rollout "
                  "over its minibatches; this count is of environment steps or rollouts, not optimizer steps", out)
        return out
    got = unroll_batch(p)
    budget_pv = next((pv for n in _UNROLL_BUDGET if (pv := p.get(n)) is not None), None)
    if got is not None and budget_pv is not None and _positive(budget_pv.value) == steps.value:
        total, per_step = int(budget_pv.value), got[0]
        if total % per_step:
            _drop(facts, "train_steps", f"{total} environment steps over {per_step} per learner step is no "
                  "whole number of learner steps", out)
        else:
            facts["train_steps"] = Fact(value=total // per_step, source="derived",
                                        evidence=[*budget_pv.where, *got[1]],
                                        note="RL: environment-step budget / transitions per learner step")
            out.append(f"train_steps: {total} counts environment steps; each learner step takes {per_step} "
                       f"(unrolls x unroll length) -> {total // per_step}")
    return out

