"""Step counts of reinforcement-learning jobs that count environment steps, not optimizer steps.

RL libraries share two names for such counts: `n_steps`/`nsteps` is the rollout horizon of A2C/PPO (environment
steps per environment between two updates), and `nb_steps` is the environment-step budget of an agent's
`fit(env, nb_steps=...)`. In a job that steps environments neither is the number of optimizer steps, so a
candidate of that name must not fill `train_steps` (the field stays null: a wrong number is worse). The one
exception is the keyword of a call fed a dataset rather than an environment (`algo.fit(dataset, n_steps=N)`,
offline RL): there the count is of gradient steps."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

ENV_LIBRARIES = frozenset({"gym", "gymnasium", "gymnax", "brax", "dm_control", "dm_env", "ale_py", "atari_py",
                           "retro", "procgen", "minigrid", "gym_minigrid", "pybullet_envs", "mujoco_py"})
"""packages whose import marks a job that steps environments"""

ENV_STEP_NAMES = frozenset({"n_steps", "nsteps", "nb_steps"})
_FITS = frozenset({"fit", "fit_offline", "train", "learn"})
"""calls that train on what they are given first: a dataset (gradient steps) or an environment (its steps)"""
_ENV_ARG = re.compile(r"(^|_|\.)envs?(\b|_)", re.IGNORECASE)


def steps_environments(py: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when a file the analyzer read imports an environment library."""
    return any(imp.split(".")[0] in ENV_LIBRARIES for s in py.values() for imp in s.get("imports", []))


def _leaf(name: str) -> str:
    return name.strip().lstrip("-$").replace("-", "_").rsplit(".", 1)[-1].lower()


def _fits_a_dataset(cand: Any, py: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when the candidate is a keyword of a call whose positional arguments name no environment
    (`algo.fit(dataset, n_steps=...)`: an offline fit's gradient steps, unlike `agent.fit(env, nb_steps=...)` or
    `algo.fit_online(env, buffer, n_steps=...)`)."""
    rel, _, line = cand.where.rpartition(":")
    if cand.how != "keyword" or not line.isdigit():
        return False
    for c in py.get(rel, {}).get("calls", []):
        if c["line"] == int(line) and cand.name in c["kwargs"] and c["func"].rsplit(".", 1)[-1] in _FITS:
            return bool(c["args"]) and not any(_ENV_ARG.search(a) for a in c["args"])
    return False


def without_env_step_counts(cands: Iterable[Any], py: Mapping[str, Mapping[str, Any]]) -> list[Any]:
    """The candidates less the `train_steps` ones named as environment-step counts, in a job that steps
    environments; unchanged otherwise."""
    cands = list(cands)
    if not steps_environments(py):
        return cands
    return [c for c in cands if not (c.field == "train_steps" and _leaf(c.name) in ENV_STEP_NAMES
                                     and not _fits_a_dataset(c, py))]
