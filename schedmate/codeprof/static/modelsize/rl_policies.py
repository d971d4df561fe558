"""Reinforcement-learning networks sized from the environment and the algorithm's documented layout.

    atari_or_mlp_policy(env="BreakoutNoFrameskip-v4", algo="ppo") -> Nature CNN with 4 actions, 1.69M
    atari_or_mlp_policy(env="HalfCheetah-v3", algo="td3", hidden=(256, 256)) -> actor + twin critics, 216K

An Atari environment (a `NoFrameskip` / `ALE/` id, or a game name beside an Atari loader) is played by the DQN
torso of Mnih et al. (the default CNN policy of Stable-Baselines, baselines, TF-Agents, d3rlpy and most others).
A vector-observation environment of the well-known table below is played by MLPs: the actor (and for off-policy
actor-critics two Q-networks, a value network for IQL) over the algorithm's default hidden sizes unless the job
states them (`hidden_sizes`, `net_arch`, `hidden_dim` x `hidden_depth`, `--hid` x `--l`). Target copies are not
counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from schedmate.codeprof.static.modelsize.convnets import mlp_params, nature_cnn_params

# (observations, actions, discrete actions?) of well-known vector-observation environments (gym / MuJoCo / Bullet
# / D4RL / DeepMind control names, matched after lower-casing and dropping separators and versions)
ENV_DIMS: dict[str, tuple[int, int, bool]] = {
    "halfcheetah": (17, 6, False), "hopper": (11, 3, False), "walker2d": (17, 6, False), "ant": (27, 8, False),
    "humanoid": (376, 17, False), "swimmer": (8, 2, False), "reacher": (11, 2, False),
    "invertedpendulum": (4, 1, False), "inverteddoublependulum": (11, 1, False), "pendulum": (3, 1, False),
    "cartpole": (4, 2, True), "mountaincar": (2, 3, True), "mountaincarcontinuous": (2, 1, False),
    "acrobot": (6, 3, True), "lunarlander": (8, 4, True), "lunarlandercontinuous": (8, 2, False),
    "bipedalwalker": (24, 4, False), "bipedalwalkerhardcore": (24, 4, False),
    "halfcheetahbulletenv": (26, 6, False), "hopperbulletenv": (15, 3, False), "walker2dbulletenv": (22, 6, False),
    "antbulletenv": (28, 8, False), "humanoidbulletenv": (44, 17, False),
    "antmaze": (29, 8, False), "pen": (45, 24, False), "door": (39, 28, False), "hammer": (46, 26, False),
    "relocate": (39, 30, False), "kitchen": (60, 9, False),
    "cheetahrun": (17, 6, False), "walkerwalk": (24, 6, False), "walkerrun": (24, 6, False),
    "hopperhop": (15, 4, False), "hopperstand": (15, 4, False), "reachereasy": (6, 2, False),
    "fingerspin": (9, 2, False), "cartpoleswingup": (5, 1, False), "humanoidrun": (67, 21, False),
    "quadrupedrun": (78, 12, False),
}
# minimal action sets of common Atari games (the full set is 18)
ATARI_ACTIONS = {"pong": 6, "breakout": 4, "seaquest": 18, "spaceinvaders": 6, "qbert": 6, "beamrider": 9,
                 "enduro": 9, "asterix": 9, "mspacman": 9, "montezumarevenge": 18, "freeway": 3, "boxing": 18}
_ATARI_ID = re.compile(r"noframeskip|^ale/|-ram-?v\d|deterministic-v\d", re.IGNORECASE)

# the algorithm's networks: (critics, value nets, actor outputs per action, default hidden sizes)
_ALGOS = {
    "sac": (2, 0, 2, (256, 256)), "td3": (2, 0, 1, (256, 256)), "ddpg": (1, 0, 1, (400, 300)),
    "redq": (10, 0, 2, (256, 256)), "iql": (2, 1, 2, (256, 256)), "cql": (2, 0, 2, (256, 256)), "awac": (2, 0, 2, (256, 256)),
    "ppo": (0, 1, 1, (64, 64)), "a2c": (0, 1, 1, (64, 64)), "trpo": (0, 1, 1, (64, 64)),
    "dqn": (0, 0, 1, (64, 64)),
}
ALGO_WORD = re.compile(r"(?<![a-z])(" + "|".join(_ALGOS) + r")(?![a-z])")


def _key(env: str) -> str:
    e = env.strip().lower().split("/")[-1].split(":")[-1]  # `gym:HalfCheetah-v2`: a suite before the task
    e = re.sub(r"-v\d+$", "", e)
    e = re.sub(r"[-_\s]+(medium|expert|random|replay|umaze|large|diverse|play|complete|partial|human|cloned)"
               r"([-_\s].*)?$", "", e)
    return re.sub(r"[-_\s]", "", e)


def env_dims(env: str) -> tuple[int, int, bool] | None:
    """(observations, actions, discrete?) of a well-known environment id, or None."""
    return ENV_DIMS.get(_key(env))


def env_spaces(env: Any) -> Any:
    """`gym.make("CartPole-v1")` for the module-size interpreter: an object whose `observation_space.shape` and
    `action_space.n` (or `.shape` for continuous actions) are the table's sizes, so that a network sized from
    them (`nn.Linear(env.observation_space.shape[0], 128)`) is counted; unknown for any other environment."""
    from schedmate.codeprof.static.modelsize.layers import Mod
    from schedmate.codeprof.static.modelsize.values import Unknown

    dims = env_dims(env) if isinstance(env, str) else None
    if dims is None:
        return Unknown(f"environment {env!r} of unknown spaces")
    obs, act, discrete = dims
    space = Mod("env", plain=True)
    space.attrs["observation_space"] = Mod("space", plain=True)
    space.attrs["observation_space"].attrs["shape"] = (obs,)
    space.attrs["action_space"] = Mod("space", plain=True)
    space.attrs["action_space"].attrs.update({"n": act} if discrete else {"shape": (act,)})
    space.attrs["unwrapped"] = space  # `env = gym.make(name).unwrapped`: the same spaces
    return space


def atari_game(env: str, atari_context: bool = False) -> str | None:
    """The Atari game an environment id names (`PongNoFrameskip-v4`, `ALE/Breakout-v5`), or a bare game name when
    the job loads Atari data (`--game breakout` beside an Atari loader)."""
    e = env.strip()
    if _ATARI_ID.search(e) or atari_context:
        word = re.sub(r"(noframeskip|deterministic|-ram)?(-v\d+)?$", "", e.lower().split("/")[-1])
        word = re.sub(r"[-_\s]", "", word)
        if word and (_ATARI_ID.search(e) or word in ATARI_ACTIONS):
            return word
    return None


def atari_policy_params(game: str, actor_critic: bool) -> int:
    """The Nature CNN with the game's action head (and a value head for an actor-critic)."""
    n = nature_cnn_params(ATARI_ACTIONS.get(game, 18))
    return n + (513 if actor_critic else 0)


def mlp_policy_params(obs: int, act: int, discrete: bool, algo: str, hidden: Sequence[int] | None = None) -> int:
    """Actor, critics and value networks of `algo` over `hidden` (the algorithm's default when None)."""
    critics, values, out_per_act, default = _ALGOS[algo]
    h = list(hidden or default)
    if discrete:
        critics = 0  # a discrete policy (or Q-network) has one output per action
    n = mlp_params([obs, *h, act * out_per_act])
    if out_per_act == 1 and values and not discrete:
        n += act  # a state-independent log standard deviation (PPO-style Gaussian policies)
    n += critics * mlp_params([obs + act, *h, 1]) + values * mlp_params([obs, *h, 1])
    return n


__all__ = ["ALGO_WORD", "ATARI_ACTIONS", "ENV_DIMS", "atari_game", "env_spaces", "atari_policy_params", "env_dims",
           "mlp_policy_params"]
