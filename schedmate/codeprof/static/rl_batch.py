"""What "the batch" is in reinforcement-learning jobs whose batch is not a loader's.

Two documented conventions, each read without running anything:

* **Unrolls x unroll length** (IMPALA, torchbeast, SEED RL): `--batch_size` counts *unrolls* (trajectories) and
  `--unroll_length` the agent steps in each, so a learner step trains on batch x unroll transitions; SEED RL's
  `--batch_size_transitions`, when set, states that count directly.
* **Parallel envs x rollout steps / minibatches** (PPO flags `--num-processes --num-steps --num-mini-batch`,
  baselines' `nenvs`, `nsteps`, `nminibatches`): the minibatch of one gradient step; A2C and ACKTR update on the
  whole rollout.
* **A run-config dict and the keys derived from it** (PureJaxRL-style single-file agents): the entry script
  builds `config = {"NUM_ENVS": 4, "NUM_STEPS": 128, "NUM_MINIBATCHES": 4, ...}` and the training function
  computes `config["MINIBATCH_SIZE"] = config["NUM_ENVS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"]`:
  the samples per gradient step. A dict with one batch-size key (`BUFFER_BATCH_SIZE`, a replay sample) gives it
  directly.

The value is both the global and the per-process batch when one process trains (no `pmap`/`shard_map` split).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from schedmate.codeprof.params import RUNTIME
from schedmate.codeprof.static.names import positive_int as _int
from schedmate.codeprof.static.rl_agent_defaults import agent_batch

_UNROLL = ("unroll_length", "unroll_len")
_TRANSITIONS = ("batch_size_transitions",)
# a derived key that is the samples per gradient step (not a count of minibatches)
_MINIBATCH_KEY = re.compile(r"^(?:mini_?batch_size|minibatch|batch_size|train_batch_size|sgd_minibatch_size)$",
                            re.IGNORECASE)
# a stated key that is the batch of one update (a replay sample or a learner minibatch), not an evaluation's
_BATCH_KEY = re.compile(r"batch_size$", re.IGNORECASE)
_NOT_TRAIN = re.compile(r"eval|test|valid|infer|inference", re.IGNORECASE)
# a setting only a reinforcement-learning job has: an unroll of a language model (truncated BPTT) is no RL unroll
_RL_SETTING = re.compile(r"actor|environment|(?:^|_)envs?(?:_|$)|discount|entropy|gamma|reward|frames|level_name",
                         re.IGNORECASE)
_SPLITS = re.compile(r"\b(?:jax\.)?(?:pmap|shard_map|pjit)\b|\bMirroredStrategy\b|\bDataParallel\b")


def unroll_batch(params: Any) -> tuple[int, list[str]] | None:
    """Transitions per learner step from `batch_size` unrolls x `unroll_length`, or a stated transition count."""
    for name in _TRANSITIONS:
        pv = params.get(name)
        if pv is not None and _int(pv.value):
            return _int(pv.value), list(pv.where)  # type: ignore[return-value]
    unroll = next((pv for n in _UNROLL if (pv := params.get(n)) is not None and _int(pv.value)), None)
    batch = params.get("batch_size")
    if unroll is None or batch is None or not _int(batch.value):
        return None
    if not any(_RL_SETTING.search(k) for k, _ in params.items()):
        return None
    return _int(batch.value) * _int(unroll.value), [*batch.where, *unroll.where]  # type: ignore[operator]


class _DictArith(ast.NodeVisitor):
    """Integer arithmetic over `name['KEY']` subscripts of one known dict; anything else is unknown."""

    def __init__(self, obj: str, values: dict[str, Any]):
        self.obj, self.values = obj, values

    def ev(self, node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == self.obj
                and isinstance(node.slice, ast.Constant) and node.slice.value in self.values):
            v = self.values[node.slice.value]
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return v
        if isinstance(node, ast.BinOp):
            a, b = self.ev(node.left), self.ev(node.right)
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.FloorDiv) and b:
                return a // b
            if isinstance(node.op, ast.Div) and b:
                return a / b
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
        raise ValueError("not arithmetic over the config dict")


def _dict_literal(expr: str) -> dict[str, Any] | None:
    try:
        v = ast.literal_eval(expr)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(v, dict) and len(v) >= 3 and all(isinstance(k, str) for k in v):
        return v
    return None


def config_dict_batch(summary: dict[str, Any], rel: str) -> tuple[int, list[str]] | None:
    """The samples per gradient step of a run-config dict literal in one file: a key the code derives from it
    (`config["MINIBATCH_SIZE"] = config["NUM_ENVS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"]`), else
    the dict's one training batch-size key."""
    for a in summary.get("assigns", []):
        target = a.get("target", "")
        if not re.fullmatch(r"[A-Za-z_]\w*", target) or not a.get("expr", "").lstrip().startswith("{"):
            continue
        values = _dict_literal(a["expr"])
        if values is None:
            continue
        where = f"{rel}:{a['line']}"
        for ks in summary.get("key_sets", []):
            if not _MINIBATCH_KEY.match(str(ks.get("key", ""))):
                continue
            try:
                node = ast.parse(ks["expr"], mode="eval").body
                got = _int(_DictArith(ks.get("obj", target), values).ev(node))
            except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, RecursionError):
                continue
            if got:
                return got, [where, f"{rel}:{ks['line']}"]
        stated = [(k, v) for k, v in values.items() if _BATCH_KEY.search(k) and not _NOT_TRAIN.search(k) and _int(v)]
        if len(stated) == 1:
            return _int(stated[0][1]), [where]  # type: ignore[return-value]
    return None


_ENVS = ("num_processes", "num_envs", "n_envs", "nenvs", "num_env", "nenv", "num_train_envs", "n_train_envs")
_ROLLOUT = ("num_steps", "n_steps", "nsteps", "num_steps_per_rollout", "num_steps_per_update")
_MINIBATCHES = ("num_mini_batch", "num_minibatches", "nminibatches", "n_minibatches", "num_mini_batches",
                "n_minibatch", "num_minibatch")
_WHOLE_ROLLOUT_ALGOS = {"a2c", "acktr"}  # one update on the whole rollout (no minibatches)


def rollout_minibatch(params: Any) -> tuple[int, list[str]] | None:
    """Samples per gradient step of an on-policy learner from its flags: parallel envs x rollout steps, split
    into the stated number of minibatches (PPO); A2C/ACKTR (`--algo a2c`) update on the whole rollout."""
    def first(names: tuple[str, ...]) -> Any:
        return next((pv for n in names if (pv := params.get(n)) is not None and _int(pv.value)), None)

    envs, steps = first(_ENVS), first(_ROLLOUT)
    if envs is None or steps is None or not any(_RL_SETTING.search(k) for k, _ in params.items()):
        return None
    rollout, where = _int(envs.value) * _int(steps.value), [*envs.where, *steps.where]  # type: ignore[operator]
    algo = params.get("algo") or params.get("algorithm")
    if algo is not None and str(algo.value).lower() in _WHOLE_ROLLOUT_ALGOS:
        return rollout, [*where, *algo.where]
    count = first(_MINIBATCHES)
    if count is None or rollout % _int(count.value):  # type: ignore[operator]
        return None
    return rollout // _int(count.value), [*where, *count.where]  # type: ignore[operator]


_TOTAL_ENV_STEPS = ("total_timesteps", "total_env_steps", "num_timesteps", "num_env_steps", "total_frames")
_UPDATE_EPOCHS = ("update_epochs", "ppo_epoch", "ppo_epochs", "num_sgd_iter", "n_epochs")
_ITERATIONS = ("num_iterations", "num_updates", "n_updates", "num_iters", "iterations", "train_steps", "max_steps")
_NESTED_ROLLOUTS = re.compile(r"steps_per_env|per_trial|per_episode|meta", re.IGNORECASE)


def rollout_updates(params: Any) -> tuple[int, list[str]] | None:
    """Optimizer steps of an on-policy learner whose config states its environment-step budget: rollouts =
    total env steps // (envs x rollout steps), each trained for the stated epochs over the stated minibatches
    (PureJaxRL-style `total_timesteps`, `num_envs`, `num_steps`, `update_epochs`, `num_minibatches`; a device
    count dividing both the envs and the budget cancels). None when any of them is not stated, or the config
    nests rollouts in longer episodes (meta-RL `num_steps_per_env`): the count is then not this product; None too when the job states or computes a count of its own."""
    def first(names: tuple[str, ...]) -> Any:
        return next((pv for n in names if (pv := params.get(n)) is not None and _int(pv.value)), None)

    if any(_NESTED_ROLLOUTS.search(k) for k, _ in params.items()):
        return None
    if any(params.get(n) is not None for n in _ITERATIONS):
        return None  # the job computes its own count of iterations (the self-written set counts those)
    total, envs, steps = first(_TOTAL_ENV_STEPS), first(_ENVS), first(_ROLLOUT[:-1])
    epochs, count = first(_UPDATE_EPOCHS), first(_MINIBATCHES)
    if None in (total, envs, steps, epochs, count):
        return None
    rollouts = _int(total.value) // (_int(envs.value) * _int(steps.value))  # type: ignore[operator]
    if not rollouts:
        return None
    where = [w for pv in (total, envs, steps, epochs, count) for w in pv.where]
    return rollouts * _int(epochs.value) * _int(count.value), where  # type: ignore[operator]


def called_rollout(sp: Any) -> tuple[int, list[str]] | None:
    """The rollout minibatch from the defaults of the entry's own training function that its call leaves
    unset (`def train(env_id, n_envs=8, nminibatches=4, n_steps=128)` called as `train(args.env)`), over the
    job's own settings; the job must still be an RL one (`_RL_SETTING`)."""
    from schedmate.codeprof.params import CODE_DEFAULT, ParamSpace
    from schedmate.codeprof.static.called_defaults import ROLLOUT_LIKE, called_function_defaults

    found = called_function_defaults(sp.wd.read_text(sp.r.entry) or "", ROLLOUT_LIKE)
    if not found:
        return None
    merged = ParamSpace()
    for key, pv in sp.r.params.items():
        merged.set(key, pv.value, list(pv.where), pv.layer)
    for name, v, line in found:
        if merged.get(name) is None:
            merged.set(name, v, f"{sp.r.entry}:{line}", CODE_DEFAULT)
    return rollout_minibatch(merged)


def rl_batches(sp: Any) -> None:
    """Put the RL batch conventions' global (and, for one process, per-process) batch on the static pass `sp`.

    The unroll convention replaces a batch read from the bare `batch_size` (which counts unrolls there); the
    config-dict convention only fills a batch nothing else found."""
    r = sp.r
    # a call or a call's argument (`@partial(jax.pmap, axis_name="devices")`) that splits the batch over devices
    texts = "\n".join(" ".join([c.get("func", ""), *c.get("args", [])]) for s in r.py.values()
                      for c in s.get("calls", []))
    one_process = not _SPLITS.search(texts) and r.val("num_gpus") in (None, 1)
    got = unroll_batch(r.params)
    if got is not None:
        plain = r.params.get("batch_size")
        stated = r.val("global_batch_size")
        if stated is None or (plain is not None and stated == plain.value):
            note = "RL: unrolls x unroll length = transitions per learner step"
            r.put("global_batch_size", got[0], got[1], note=note)
            if one_process:
                r.put("micro_batch_size", got[0], got[1], note=note)
        return
    if r.val("global_batch_size") is not None or r.val("micro_batch_size") is not None or not r.entry:
        return
    if (agent := agent_batch(sp)) is not None:  # a library agent's replay batch (keras-rl DQNAgent)
        r.put("global_batch_size", agent[0], agent[1], note="RL: the agent's replay batch per update")
        if one_process:
            r.put("micro_batch_size", agent[0], agent[1], note="RL: the agent's replay batch per update")
        return
    if (updates := rollout_updates(r.params)) is not None:  # before the rollout length passes for the steps
        r.params.set("train_steps", updates[0], updates[1], RUNTIME)
    summary = r.py.get(r.entry)
    got = rollout_minibatch(r.params) or called_rollout(sp) \
        or (config_dict_batch(summary, r.entry) if summary else None)
    if got is not None:
        note = "RL: samples per gradient step from the run-config dict"
        r.put("global_batch_size", got[0], got[1], note=note)
        if one_process:
            r.put("micro_batch_size", got[0], got[1], note=note)
