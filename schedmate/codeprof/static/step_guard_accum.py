"""Accumulation read from the guard around the optimizer step: a training loop that runs
`if (it + 1) % cfg.accum == 0: optimizer.step()` (or `scaler.step(optimizer)`) updates the weights once every
N loader batches, whatever the setting is called (Darknet-style `subdivisions`, an `update_freq`, a literal 4).

Only a guard on the optimizer's own step counts (a scheduler, an EMA or a logger stepping every N batches
says nothing about the batch), only a counter of batches (not of epochs), and only when every such guard in
the sources resolves to the same N >= 2; anything else leaves the accumulation to the other readers. A file
that also steps an optimizer on every batch (outside an `if accumulating: ... else:` switch) is a delayed
update (a GAN generator every n_critic batches, TD3's actor every policy_freq), not accumulation.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int

# `global_step % config.subdivisions == 0`, `(i + 1) % args.accum_iter == 0`, `0 == step % n`
_GUARD = re.compile(r"^\(?\s*(?P<counter>[^%=<>!]+?)\s*\)?\s*%\s*(?P<n>[\w.\[\]'\"]+)\s*==\s*0$")
_GUARD_REV = re.compile(r"^0\s*==\s*\(?\s*(?P<counter>[^%=<>!]+?)\s*\)?\s*%\s*(?P<n>[\w.\[\]'\"]+)$")
_OPTIMIZER = re.compile(r"optim|(?:^|_)opt(?:_|$)", re.IGNORECASE)
_NOT_BATCH_COUNTER = re.compile(r"epoch|\bep\b", re.IGNORECASE)


def _optimizer_step(call: dict[str, Any]) -> bool:
    """`optimizer.step()`, `self.opt_g.step()`, or an AMP scaler stepping an optimizer."""
    func = call.get("func") or ""
    if not func.endswith(".step"):
        return False
    receiver = func[: -len(".step")].rsplit(".", 1)[-1]
    if _OPTIMIZER.search(receiver):
        return True
    args = call.get("args") or []
    return "scaler" in receiver.lower() and bool(args) and bool(_OPTIMIZER.search(args[0]))


def _guard_modulus(test: str) -> str | None:
    """The modulus of a `counter % N == 0` test over a batch counter, or None."""
    for part in re.split(r"\s+and\s+", test.strip()):
        m = _GUARD.match(part.strip()) or _GUARD_REV.match(part.strip())
        if m and not _NOT_BATCH_COUNTER.search(m.group("counter")):
            return m.group("n")
    return None


def _alternative(unguarded: dict[str, Any], guarded: dict[str, Any]) -> bool:
    """Is `unguarded` the other branch of a switch the guarded step sits in (`if accum > 1: ... else:
    optimizer.step()`)?"""
    conds = set(guarded.get("when") or [])
    return any(w.startswith("not (") and w[5:-1] in conds for w in unguarded.get("when") or []) or any(
        f"not ({w})" in conds for w in unguarded.get("when") or [])


def _guarded_steps(calls: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """The file's optimizer steps under a batch-counter modulus, with that modulus; empty when the same file
    also steps an optimizer every batch outside such a switch (a GAN's discriminator, TD3's critic: the
    guarded one is a delayed update, not accumulation)."""
    steps = [c for c in calls if _optimizer_step(c)]
    guarded, free = [], []
    for c in steps:
        n = next((m for t in c.get("when") or [] if not t.startswith("not (") and (m := _guard_modulus(t))), None)
        (guarded.append((c, n)) if n else free.append(c))
    if any(not any(_alternative(f, g) for g, _ in guarded) for f in free):
        return []
    return guarded


def step_guard_accumulation(sp: Any) -> tuple[int, list[str]] | None:
    """The N of `if <batch counter> % N == 0: optimizer.step()` when every optimizer step so guarded in the
    sources resolves to one N >= 2; None otherwise (no guard, N unresolved, two values, or a file that also
    steps an optimizer every batch)."""
    hits: dict[int, list[str]] = {}
    for rel, s in sp.r.py.items():
        for call, n_src in _guarded_steps(s.get("calls", [])):
            ok, value, ev = sp._resolver.eval(n_src)
            n = to_int(value) if ok else None
            if n is None:
                return None  # a guard whose N the sources leave open: do not guess around it
            if n >= 2:
                hits.setdefault(n, [f"{rel}:{call['line']}", *ev])
    if len(hits) == 1:
        ((n, where),) = hits.items()
        return n, where
    return None
