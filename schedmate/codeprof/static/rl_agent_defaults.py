"""The replay batch of an RL library's agent class the job builds without a `batch_size` (a library default the
job relies on), or the `batch_size` it passes. Only defaults certain from the library's own signature."""

from __future__ import annotations

from typing import Any

# (import prefix of the library, agent class) -> the class's `batch_size` default
AGENT_BATCH_DEFAULTS: dict[tuple[str, str], tuple[int, str]] = {
    # keras-rl 0.4.2: rl/agents/dqn.py AbstractDQNAgent (DQNAgent, NAFAgent) and rl/agents/ddpg.py DDPGAgent
    ("rl.agents", "DQNAgent"): (32, "keras-rl 0.4.2 DQNAgent batch_size default"),
    ("rl.agents", "NAFAgent"): (32, "keras-rl 0.4.2 NAFAgent batch_size default"),
    ("rl.agents", "DDPGAgent"): (32, "keras-rl 0.4.2 DDPGAgent batch_size default"),
}


def agent_batch(sp: Any) -> tuple[int, list[str]] | None:
    """(batch, where) of the one library agent the job's code builds: the `batch_size` it passes, else the
    class's default; None when no such agent, several disagree, or the call hides its arguments (`**kw`)."""
    found: dict[int, list[str]] = {}
    for rel, s in sp.r.py.items():
        imports = s.get("imports", [])
        for c in s.get("calls", []):
            tail = c["func"].rsplit(".", 1)[-1]
            hit = next((d for (pre, cls), d in AGENT_BATCH_DEFAULTS.items() if cls == tail
                        and any(i == pre or i.startswith(pre + ".") for i in imports)), None)
            if hit is None:
                continue
            if "batch_size" in c["kwargs"]:
                ok, v, ev = sp._resolver.eval(c["kwargs"]["batch_size"])
                if not (ok and isinstance(v, int) and not isinstance(v, bool) and v > 0):
                    return None
                found.setdefault(v, [f"{rel}:{c['line']}", *ev])
            elif c.get("spread"):
                return None
            else:
                found.setdefault(hit[0], [f"{rel}:{c['line']}", hit[1]])
    if len(found) != 1:
        return None
    ((v, where),) = found.items()
    return v, where
