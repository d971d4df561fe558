"""Token and latency accounting per component (`code`, `log`, `history`, ...), thread-safe."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass


@dataclass
class CallUsage:
    """What one client call cost. A cache hit has `cached=True`, `requests=0` and zero tokens."""

    requests: int = 0
    """HTTP round trips made (2 when a repair was attempted)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    repaired: bool = False


@dataclass
class ComponentUsage:
    calls: int = 0
    """Client calls, cache hits included."""
    cache_hits: int = 0
    requests: int = 0
    """HTTP round trips to the server (repairs included)."""
    repairs: int = 0
    failures: int = 0
    """Calls that raised an LLMError."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    """Wall time spent in calls (cache hits included; they are near zero)."""


class Usage:
    """Ledger of `ComponentUsage` keyed by component name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by: dict[str, ComponentUsage] = {}

    def record(self, component: str, call: CallUsage, failed: bool = False) -> None:
        with self._lock:
            u = self._by.setdefault(component, ComponentUsage())
            u.calls += 1
            u.cache_hits += int(call.cached)
            u.requests += call.requests
            u.repairs += int(call.repaired)
            u.failures += int(failed)
            u.prompt_tokens += call.prompt_tokens
            u.completion_tokens += call.completion_tokens
            u.seconds += call.seconds

    def get(self, component: str) -> ComponentUsage:
        """A copy of one component's totals (zeros if it made no call)."""
        with self._lock:
            return ComponentUsage(**asdict(self._by.get(component, ComponentUsage())))

    def summary(self) -> dict[str, dict[str, float]]:
        """`{component: {calls, cache_hits, requests, repairs, failures, prompt_tokens, completion_tokens,
        seconds}}`, plus a `_total` entry when there is more than one component."""
        with self._lock:
            out = {name: asdict(u) for name, u in sorted(self._by.items())}
        if len(out) > 1:
            total = ComponentUsage()
            for u in out.values():
                for k, v in u.items():
                    setattr(total, k, getattr(total, k) + v)
            out["_total"] = asdict(total)
        return out

    def reset(self) -> None:
        with self._lock:
            self._by.clear()
