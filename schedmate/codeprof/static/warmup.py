"""Off-policy RL loops that start updating after a warm-up: `while step < num_train_steps: ... if step >=
num_seed_steps: agent.update(...); step += 1` (also `for t in range(max_timesteps): if t >= start_timesteps:
policy.train(...)`). One update per loop iteration once the warm-up is over, so the optimizer steps are the
loop's length minus the warm-up, not the environment steps the config names."""

from __future__ import annotations

import ast
from typing import Any

_UPDATE_WORDS = ("update", "train", "learn", "optimize", "optimise")


def _bound(loop: ast.While | ast.For) -> tuple[str, str, str] | None:
    """(counter, start, stop expressions) of `while c < N` (with `c += 1` in its body; start taken as 0),
    `for c in range(N)` or `for c in range(a, b)`, also wrapped in a progress bar (`tqdm(range(1, N + 1))`)."""
    if isinstance(loop, ast.While):
        t = loop.test
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt):
            counter = ast.unparse(t.left)
            steps_by_one = any(isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add)
                               and ast.unparse(st.target) == counter and ast.unparse(st.value) == "1"
                               for st in loop.body)
            if steps_by_one:
                return counter, "0", ast.unparse(t.comparators[0])
        return None
    args = _range_args(loop.iter)
    if args and len(args) in (1, 2) and isinstance(loop.target, ast.Name):
        n = args[-1]
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "int" and len(n.args) == 1:
            n = n.args[0]
        return loop.target.id, ast.unparse(args[0]) if len(args) == 2 else "0", ast.unparse(n)
    return None


def _counter_test(test: ast.expr, counter: str, resolver: Any) -> ast.expr | None:
    """The `counter >= W` part of an `if` test: the test itself, or one conjunct of `flag and counter >= W`
    whose other conjuncts the run's settings make true (`args.train_behavioral and t >= args.start_timesteps`)."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return test
    mine = [v for v in test.values if isinstance(v, ast.Compare) and ast.unparse(v.left) == counter]
    rest = [ast.unparse(v) for v in test.values if v not in mine]
    if len(mine) != 1 or resolver is None or resolver.truth(rest) is not True:
        return None
    return mine[0]


def _calls_update(st: ast.stmt) -> bool:
    """Whether a statement calls an update (`agent.update(batch)`, `policy.train(...)`), not an evaluation."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr.lower().startswith(_UPDATE_WORDS) and "eval" not in n.func.attr.lower()
               for n in ast.walk(st))


def _gated_update(body: list[ast.stmt], counter: str, resolver: Any = None) -> tuple[str, int, int, str] | None:
    """(warm-up expression, offset, line, updates per iteration) of `if counter >= W:` (offset 0) or
    `if counter > W:` (offset 1) directly in `body` whose branch calls an update (`agent.update(...)`,
    `policy.train(...)`) once, or K times in `for _ in range(K):`."""
    for st in body:
        if not isinstance(st, ast.If):
            continue
        t = _counter_test(st.test, counter, resolver)
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and ast.unparse(t.left) == counter
                and isinstance(t.ops[0], ast.GtE | ast.Gt)):
            continue
        inner, per = st.body, "1"
        loops = [b for b in st.body if isinstance(b, ast.For)]
        if len(loops) == 1:  # `for _ in range(updates_per_step): agent.update(...)`, maybe beside logging
            it = loops[0].iter
            if not (isinstance(it, ast.Call) and ast.unparse(it.func) == "range" and len(it.args) == 1):
                continue
            if any(_calls_update(b) for b in st.body if b is not loops[0]):
                continue
            inner, per = loops[0].body, ast.unparse(it.args[0])
            local = {ast.unparse(b.targets[0]): ast.unparse(b.value) for b in st.body[:st.body.index(loops[0])]
                     if isinstance(b, ast.Assign) and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name)}
            per = local.get(per, per)  # `num_updates = 1; for _ in range(num_updates):`
        if any(_calls_update(s) for s in inner) \
                and not any(isinstance(n, ast.For | ast.While) for s in inner for n in ast.walk(s)):
            return ast.unparse(t.comparators[0]), int(isinstance(t.ops[0], ast.Gt)), st.lineno, per
    return None


def _number(x: Any) -> Any:
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return x
    return x


def updates_after_warmup(text: str, rel: str, resolver: Any) -> tuple[int, list[str]] | None:
    """Optimizer steps of an off-policy loop with a warm-up (see the module docstring), or None."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.While | ast.For):
            continue
        bound = _bound(loop)
        if bound is None:
            continue
        gate = _gated_update(loop.body, bound[0], resolver)
        if gate is None:
            continue
        ok_a, a, ev_a = resolver.eval(bound[1])
        ok_n, n, ev_n = resolver.eval(bound[2])
        ok_w, w, ev_w = resolver.eval(gate[0])
        ok_k, k, ev_k = resolver.eval(gate[3])
        a, n, w, k = _number(a), _number(n), _number(w), _number(k)  # OmegaConf reads `1e6` as a float
        if not (ok_a and ok_n and ok_w and ok_k) or not all(isinstance(x, int | float) and not isinstance(x, bool)
                                                            for x in (a, n, w, k)):
            return None
        # the counter runs over [a, n); updates happen from the warm-up on (or from the start, if later)
        steps = (int(n) - max(int(a), int(w) + gate[1])) * int(k)
        if steps > 0:
            return steps, [f"{rel}:{loop.lineno}", f"{rel}:{gate[2]}", *ev_a, *ev_n, *ev_w, *ev_k]
    return None


def _range_args(it: ast.AST) -> list[ast.expr] | None:
    """The arguments of `range(...)`, also wrapped in a progress bar (`tqdm.tqdm(range(a, b), ...)`)."""
    if isinstance(it, ast.Call) and ast.unparse(it.func) in {"tqdm", "tqdm.tqdm", "trange"} and it.args:
        it = it.args[0]
    if isinstance(it, ast.Call) and ast.unparse(it.func) == "range":
        return list(it.args)
    return None


def loop_from_offset(text: str, rel: str, resolver: Any, step_names: tuple[str, ...]) -> tuple[int, list[str]] | None:
    """The training loop `for i in range(1 - FLAGS.num_pretraining_steps, FLAGS.max_steps + 1)`: a start that
    is itself a setting (pre-training steps before the main ones) makes the loop longer than its stop; its
    length is stop - start. Loops starting at a literal are left to the step settings."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.For):
            continue
        args = _range_args(loop.iter)
        if not args or len(args) != 2 or isinstance(args[0], ast.Constant):
            continue
        stop = ast.unparse(args[1])
        if not any(name in stop for name in step_names):
            continue
        ok_a, a, ev_a = resolver.eval(ast.unparse(args[0]))
        ok_b, b, ev_b = resolver.eval(stop)
        a, b = _number(a), _number(b)
        if ok_a and ok_b and all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b)) and b > a:
            return int(b) - int(a), [f"{rel}:{loop.lineno}", *ev_a, *ev_b]
    return None
