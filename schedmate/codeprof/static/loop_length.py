"""Training length written as the shape of the entry script's own loops, where no single setting says it.

Three shapes many research scripts share (RL, offline RL, graph and small-model trainers):

- **Chunked loop**: `while it < max_timesteps: agent.train(buffer, iterations=eval_freq); it += eval_freq`
  (or the chunk as an inner `for _ in range(eval_freq): agent.train(...)`). The loop runs until the counter
  reaches its limit in chunks of K updates, so the optimizer steps are the limit rounded up to whole chunks,
  whatever the chunk's own name (`iterations`, `eval_freq`) suggests.
- **Epochs made of a fixed number of updates**: `for epoch in range(n_epochs): for _ in
  range(n_train_step_per_epoch): batch = buffer.sample(bs); agent.train(batch)`. An "epoch" here is a
  logging period of sampled minibatches, not a pass over the data: the run is n_epochs x K steps and has no
  epochs (the corpus convention: epochs are passes over the data). An inner count computed from the data
  (`len(data) // batch`) is a pass and is left alone.
- **Unbounded caps**: a step cap set to a sentinel (`max_total_steps = 10**10`, `sys.maxsize`, `inf`) means
  "until the epochs end", not a length; it is marked unbounded so that it is not read as the run's steps.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

_UPDATE = re.compile(r"^(update|train|learn|optimi[sz]e|fit)", re.IGNORECASE)
# a cap at or above this many steps is a sentinel (2**31 - 1 and up), never a run anyone schedules
_SENTINEL = 2**31 - 1
_STEP_LEAF = re.compile(r"(^|_)(steps?|iters?|iterations?|updates?)$|^max_(total_)?(steps|iters|iterations|updates)",
                        re.IGNORECASE)
_PASS_COUNT = re.compile(r"len\(|//\s*\(?\s*[\w.]*batch|size\s*//|num_batches|n_batches", re.IGNORECASE)
UNBOUNDED = "unbounded"


def _num(x: Any) -> float | None:
    if isinstance(x, str):
        try:
            x = float(x)
        except ValueError:
            return None
    if isinstance(x, bool) or not isinstance(x, int | float) or isinstance(x, float) and math.isnan(x):
        return None
    return float(x)


def _update_calls(body: list[ast.stmt]) -> list[ast.Call]:
    """Calls to an update-like method (`agent.train(...)`, `policy.update(...)`) in `body`, eval calls excluded."""
    out = []
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _UPDATE.match(n.func.attr) \
                    and "eval" not in n.func.attr.lower():
                out.append(n)
    return out


def _plain_range(it: ast.AST) -> str | None:
    """N of `range(N)` / `range(int(N))` (also inside `tqdm(...)`/`trange(N)`), as source text."""
    if isinstance(it, ast.Call) and ast.unparse(it.func) in {"tqdm", "tqdm.tqdm", "trange"} and it.args:
        if ast.unparse(it.func) == "trange" and len(it.args) == 1:
            return ast.unparse(it.args[0])
        it = it.args[0]
    if isinstance(it, ast.Call) and ast.unparse(it.func) == "range" and len(it.args) == 1:
        n = it.args[0]
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "int" and len(n.args) == 1:
            n = n.args[0]
        return ast.unparse(n)
    return None


def _local_values(fn: ast.AST | None) -> dict[str, str]:
    """`name = expr` assignments of a function body (or module), by name, for locals a loop bound uses."""
    out: dict[str, str] = {}
    if fn is None:
        return out
    for st in ast.walk(fn):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            out.setdefault(st.targets[0].id, ast.unparse(st.value))
    return out


def _eval(expr: str, local: dict[str, str], resolver: Any, depth: int = 0) -> tuple[float | None, list[str]]:
    """Resolve `expr`, substituting the enclosing function's own locals first (two levels deep)."""
    ok, v, ev = resolver.eval(expr)
    n = _num(v) if ok else None
    if n is not None or depth > 2:
        return n, list(ev) if ok else []
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None, []
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & set(local)
    if not names:
        return None, []
    for name in names:
        expr = re.sub(rf"\b{re.escape(name)}\b", f"({local[name]})", expr)
    return _eval(expr, local, resolver, depth + 1)


def _functions(tree: ast.Module) -> list[tuple[ast.AST, ast.AST]]:
    """(loop, enclosing function or module) for every loop of the file."""
    out = []

    def visit(node: ast.AST, fn: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.While | ast.For):
                out.append((child, fn))
            visit(child, child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else fn)

    visit(tree, tree)
    return out


def _chunk(loop: ast.While) -> tuple[str, str, str, int] | None:
    """(counter, limit, chunk, line) of `while c < LIMIT:` whose body adds a chunk K to c and runs K updates."""
    t = loop.test
    if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And):  # `while (it < N) and (not early_stop)`
        t = next((v for v in t.values if isinstance(v, ast.Compare)), None)  # type: ignore[assignment]
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt)):
        return None
    counter, limit = ast.unparse(t.left), ast.unparse(t.comparators[0])
    inc = [st for st in loop.body if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add)
           and ast.unparse(st.target) == counter]
    if len(inc) != 1:
        return None
    k = ast.unparse(inc[0].value)
    if k in {"1", "1.0"}:
        return None  # one update per pass: the warm-up and step-loop readers handle it
    k_plain = re.sub(r"^int\((.*)\)$", r"\1", k)
    for call in _update_calls(loop.body):  # `agent.train(buffer, iterations=K)`
        for kw in call.keywords:
            src = ast.unparse(kw.value)
            if kw.arg and re.search(r"iter|steps", kw.arg) and src in {k, k_plain} | {f"int({k_plain})"}:
                return counter, limit, k, loop.lineno
    for st in loop.body:  # `for _ in range(K): policy.train(buffer)`
        if isinstance(st, ast.For) and _update_calls(st.body):
            n = _plain_range(st.iter)
            if n is not None and re.sub(r"^int\((.*)\)$", r"\1", n) == k_plain:
                return counter, limit, k, loop.lineno
    # `iterations = int(a * b)` then `agent.train(..., iterations=iterations)` and `it += iterations`
    assigned = {ast.unparse(st.targets[0]) for st in loop.body if isinstance(st, ast.Assign) and len(st.targets) == 1}
    if k in assigned and any(ast.unparse(kw.value) == k for c in _update_calls(loop.body) for kw in c.keywords):
        return counter, limit, k, loop.lineno
    return None


def chunked_loop_steps(text: str, rel: str, resolver: Any) -> tuple[int, list[str]] | None:
    """Optimizer steps of a `while counter < limit` loop that runs its updates in chunks (module docstring)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for loop, fn in _functions(tree):
        if not isinstance(loop, ast.While):
            continue
        got = _chunk(loop)
        if got is None:
            continue
        _, limit, k, line = got
        local = _local_values(fn)
        for st in loop.body:  # the chunk's own definition inside the loop
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and ast.unparse(st.targets[0]) == k:
                local = {**local, k: ast.unparse(st.value)}
        n, ev_n = _eval(limit, local, resolver)
        c, ev_c = _eval(k, local, resolver)
        if n is None or c is None or n <= 0 or c <= 0 or not n < _SENTINEL:
            return None
        steps = math.ceil(n / c) * int(c)
        return steps, [f"{rel}:{line}", *ev_n, *ev_c]
    return None


def fixed_block_epochs(text: str, rel: str, resolver: Any) -> tuple[int, list[str]] | None:
    """n_epochs x K of `for epoch in range(n_epochs): ... for _ in range(K): <sampled minibatch update>`,
    where K is a setting rather than a count of the data's batches (module docstring)."""
    for loop, fn, e in epoch_range_loops(text):
        for st in ast.walk(loop):
            if st is loop or not isinstance(st, ast.For):
                continue
            k = _plain_range(st.iter)
            if k is None or _PASS_COUNT.search(k) or not _update_calls(st.body):
                continue
            if any(isinstance(n, ast.For | ast.While) for s in st.body for n in ast.walk(s)):
                continue  # the inner loop nests further loops: not one update per pass
            where = [f"{rel}:{loop.lineno}", f"{rel}:{st.lineno}"]
            return epochs_times_block(e, k, _local_values(fn), resolver, where)
    return None


def epoch_range_loops(text: str) -> list[tuple[ast.For, Any, str]]:
    """(loop, enclosing function, range bound) of every `for <...epoch...> in range(<bound>)` in the text."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for loop, fn in _functions(tree):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) \
                and re.search(r"epoch", loop.target.id, re.IGNORECASE) and (e := _plain_range(loop.iter)) is not None:
            out.append((loop, fn, e))
    return out


def epochs_times_block(e: str, k: str, local: dict[str, Any], resolver: Any,
                       where: list[str]) -> tuple[int, list[str]] | None:
    """n_epochs x K optimizer steps of an epoch loop over fixed blocks of K updates, both counts resolved."""
    n_e, ev_e = _eval(e, local, resolver)
    n_k, ev_k = _eval(k, local, resolver)
    if n_e is None or n_k is None or n_e < 1 or n_k < 2 or not float(n_e * n_k).is_integer():
        return None
    return int(n_e * n_k), [*where, *ev_e, *ev_k]


def unbounded_caps(params: Any) -> list[str]:
    """Keys of step caps holding a sentinel (`10**10`, `sys.maxsize`, `inf`); the caller marks them unbounded."""
    out = []
    for key, pv in params.items():
        leaf = key.rsplit(".", 1)[-1]
        if not _STEP_LEAF.search(leaf):
            continue
        v = pv.value
        if isinstance(v, str) and v.strip().lower() in {"inf", "float('inf')", 'float("inf")', "math.inf",
                                                         "sys.maxsize", "np.inf"}:
            out.append(key)
            continue
        n = _num(v)
        if n is not None and (math.isinf(n) or n >= _SENTINEL):
            out.append(key)
    return out


def lines_in_loops(text: str) -> set[int]:
    """Lines of the statements inside a `for`/`while` body: an `x += 1` there is a counter the loop advances,
    not a setting the script adjusts once before training."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    out: set[int] = set()
    for loop in ast.walk(tree):
        if isinstance(loop, ast.For | ast.While | ast.AsyncFor):
            for st in loop.body:
                out.update(n.lineno for n in ast.walk(st) if isinstance(n, ast.stmt))
    return out


_SUFFIXED = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kKmMbB])\s*")
_MULT = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000}


def written_counts(params: Any) -> list[tuple[str, int]]:
    """(key, number) of step or iteration counts written as text: `100k`, `2.5M`, `1e5`, `1_000_000` (a
    string option or a YAML 1.1 scalar that the script turns into a number before using it)."""
    out = []
    for key, pv in params.items():
        v = pv.value
        if not isinstance(v, str) or not _STEP_LEAF.search(key.rsplit(".", 1)[-1]):
            continue
        m = _SUFFIXED.fullmatch(v)
        if m:
            n = float(m.group(1)) * _MULT[m.group(2).lower()]
        else:
            n = _num(v.replace("_", "")) if re.fullmatch(r"\s*[\d_.]+(?:[eE][+]?\d+)?\s*", v) else None
        if n is not None and n >= 1 and float(n).is_integer():
            out.append((key, int(n)))
    return out


def _counted_range(it: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """(start, stop) of `range(start, stop)` / `trange(start, stop)`, also inside `tqdm(...)`."""
    if isinstance(it, ast.Call) and ast.unparse(it.func) in {"tqdm", "tqdm.tqdm"} and it.args:
        it = it.args[0]
    if isinstance(it, ast.Call) and ast.unparse(it.func).rsplit(".", 1)[-1] in {"range", "trange"} \
            and len(it.args) == 2 and not it.keywords:
        return it.args[0], it.args[1]
    return None


def _bump(st: ast.stmt, var: str) -> int | None:
    """k of `var = var + k` / `var += k` (a whole k), None for any other statement."""
    if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) and ast.unparse(st.target) == var:
        inc = st.value
    elif isinstance(st, ast.Assign) and [ast.unparse(t) for t in st.targets] == [var] \
            and isinstance(st.value, ast.BinOp) and isinstance(st.value.op, ast.Add) \
            and ast.unparse(st.value.left) == var:
        inc = st.value.right
    else:
        return None
    return inc.value if isinstance(inc, ast.Constant) and type(inc.value) is int else None


def _start_offset(start: ast.expr, before: list[ast.stmt]) -> int:
    """How many counts a loop skips from its start: a literal start k, or a start variable (a resume counter,
    0 on a fresh run) that the statements just before the loop bump by k (`start = start + 1`)."""
    if isinstance(start, ast.Constant) and type(start.value) is int:
        return max(start.value, 0)
    if isinstance(start, ast.Name):
        for st in reversed(before):
            if any(isinstance(n, ast.Name) and n.id == start.id and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(st)) or _bump(st, start.id) is not None:
                return max(_bump(st, start.id) or 0, 0)
    return 0


def range_start_offsets(text: str) -> dict[str, int]:
    """Names used as the stop of `for i in range(start, N)` with a start past 0, and by how much: such a loop
    runs N - start times (`N_iters = 200000 + 1; start = start + 1; for i in trange(start, N_iters)` runs
    200,000). A name whose loops disagree is left out."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    seen: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, st in enumerate(block):
                rng = _counted_range(st.iter) if isinstance(st, ast.For) else None
                if rng is not None and isinstance(rng[1], ast.Name):
                    seen.setdefault(rng[1].id, set()).add(_start_offset(rng[0], block[:i]))
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and next(iter(v)) > 0}
