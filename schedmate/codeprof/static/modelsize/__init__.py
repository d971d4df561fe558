"""Parameters counted from the job's own model definition (`nn.Module` classes built in the entry script).

    count_entry_model(read_text, import_file, resolve, "train.py") -> (params, evidence) | None

The entry script's assignments whose value constructs a local `nn.Module` class (directly, through a
local builder function, or from a table of builders indexed by a setting: `resnet.__dict__[args.arch]()`,
`MODELS[args.model]`) are the models being trained; wrappers (`.to(device)`, `DataParallel(...)`) are
looked through. Models of different classes (a generator and a discriminator) are summed; a class built
twice (a target network, a worker's copy) counts once; auxiliary ones (EMA copies, teachers, frozen
references, losses) are not counted. Any part that cannot be counted exactly
makes the whole count None.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.static.modelsize.called_functions import called_models
from schedmate.codeprof.static.modelsize.conditions import alternatives, settled_by_interp
from schedmate.codeprof.static.modelsize.flax_learners import learner_flax_models
from schedmate.codeprof.static.modelsize.flax_modules import is_flax_call
from schedmate.codeprof.static.modelsize.flax_modules import root_total as flax_root_total
from schedmate.codeprof.static.modelsize.interp import (
    ClassRef,
    Ext,
    FuncRef,
    Interp,
    LazyDict,
    ModuleRef,
    Source,
    Unknown,
)
from schedmate.codeprof.static.modelsize.keras_layers import KERAS_PATH
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.passthrough import moved_argument
from schedmate.codeprof.static.modelsize.path_env import path_env
from schedmate.codeprof.static.modelsize.trainer_objects import trainer_models
from schedmate.codeprof.static.modelsize.tuple_builders import tuple_models

# a model built beside the trained one (a copy for averaging or distillation, a frozen reference) or a loss
AUX_TARGET = re.compile(r"ema|teacher|ref(erence)?\b|frozen|target|loss|criterion|metric|lpips|perceptual|"
                        r"tokenizer|vae|text_encoder|clip", re.IGNORECASE)
_WRAPPERS = re.compile(r"(^|\.)(DataParallel|DistributedDataParallel|DDP|FullyShardedDataParallel|FSDP|compile)$")
_SAME = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "requires_grad_"}


def _unwrap(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _SAME:
            node = f.value
        elif _WRAPPERS.search(ast.unparse(f)) and node.args:
            node = node.args[0]
        else:
            break
    return node


def _assignments(tree: ast.Module, tuples: bool = False) -> list[ast.Assign]:
    """Assignments to one name (or with `tuples`, to a tuple of names) outside class bodies (module level and in
    functions)."""
    out: list[ast.Assign] = []
    kind = ast.Tuple if tuples else ast.Name

    def visit(body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, ast.ClassDef):
                continue
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], kind):
                out.append(st)
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(st, name, None)
                if isinstance(inner, list):
                    visit([s for s in inner if isinstance(s, ast.stmt)])
            for h in getattr(st, "handlers", []) or []:
                visit(h.body)
    visit(tree.body)
    return out


_MODEL_ATTR = re.compile(r"(^|_)(model|net|network)(_|$)", re.IGNORECASE)


def _self_assignments(it: Interp, src: Source) -> list[tuple[str, ast.Assign]]:
    """`self.model = build(...)` in the methods of the script's classes that are not modules themselves (a
    trainer or runner that builds the model it trains): (attribute name, assignment)."""
    out: list[tuple[str, ast.Assign]] = []
    for cls in src.tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        try:
            ref = it.global_(src, cls.name)
            if not isinstance(ref, ClassRef) or it.is_module_class(ref):
                continue
        except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
            continue  # a class whose bases cannot be followed: not known to be anything but a module
        for st in ast.walk(cls):
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(t := st.targets[0], ast.Attribute) \
                    and isinstance(t.value, ast.Name) and t.value.id == "self" and _MODEL_ATTR.search(t.attr):
                out.append((t.attr, st))
    return out


# layers with the same parameters under another name (the synchronised batch norm of distributed runs)
_SAME_SIZE = {"torch.nn.SyncBatchNorm": "torch.nn.BatchNorm2d", "nn.SyncBatchNorm": "nn.BatchNorm2d"}


def _either_way(it: Interp, node: ast.expr, env: dict[str, Any], src: Source) -> Any:
    """The value of `node`; for `a if cond else b` with an unknown condition, the value both branches share
    (`nn.SyncBatchNorm if distributed else nn.BatchNorm2d`: the same layer sizes either way)."""
    try:
        return it.eval(node, dict(env), src)
    except GiveUp:
        if not isinstance(node, ast.IfExp):
            raise
    both = {(k := str(getattr(b, "path", b)), _SAME_SIZE.get(k, k))[1]: b
            for b in (it.eval(node.body, dict(env), src), it.eval(node.orelse, dict(env), src))}
    if len(both) != 1:
        raise GiveUp("the branches of a condition known only at run time differ")
    return next(iter(both.values()))


def _method_env(it: Interp, src: Source, st: ast.Assign) -> dict[str, Any]:
    """The local names a method assigns before `st` (`norm = nn.BatchNorm2d`), those the interpreter can value."""
    env: dict[str, Any] = {}
    for fn in ast.walk(src.tree):
        if isinstance(fn, ast.FunctionDef) and st in fn.body:
            for prev in fn.body[:fn.body.index(st)]:
                if isinstance(prev, ast.Assign) and len(prev.targets) == 1 and isinstance(prev.targets[0], ast.Name):
                    try:
                        val = _either_way(it, prev.value, env, src)
                    except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
                        continue
                    if not isinstance(val, Unknown):
                        env[prev.targets[0].id] = val
                elif isinstance(prev, ast.Assign) and len(prev.targets) == 1 and isinstance(prev.targets[0], ast.Tuple):
                    try:  # `env, env_params = gymnax.make(name)`
                        it.bind(prev.targets[0], it.eval(prev.value, dict(env), src), env, src)
                    except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
                        continue
    return env


def _with_added_layers(tree: ast.Module, st: ast.Assign) -> ast.expr:
    """`model = Sequential()` followed by `model.add(layer)` statements in the same block: the value as one
    `Sequential([layer, ...])` call (the Keras idiom of building a layer list step by step)."""
    value = st.value
    if not isinstance(st.targets[0], ast.Name):
        return value
    name = st.targets[0].id
    if not (isinstance(value, ast.Call) and not value.args and not value.keywords
            and ast.unparse(value.func).endswith("Sequential")):
        return value
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or st not in body:
            continue
        layers: list[ast.expr] = []
        for nxt in body[body.index(st) + 1:]:
            call = nxt.value if isinstance(nxt, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add" \
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == name and len(call.args) == 1:
                layers.append(call.args[0])
        if layers:
            return ast.copy_location(ast.Call(value.func, [ast.List(layers, ast.Load())], []), value)
    return value


def _builds_model(it: Interp, src: Source, call: ast.Call, depth: int = 0) -> bool:
    """Whether a call constructs a local module: a module class, a table of builders, or a local function
    that returns one of those (`def resnet56(): return ResNet(...)`), never a training or evaluation helper."""
    try:  # the callee only: nothing is built yet
        if isinstance(call.func, ast.Subscript):  # `MODELS[args.model](...)`, `resnet.__dict__[args.arch]()`
            base = it.eval(call.func.value, {}, src)
            return isinstance(base, (LazyDict, ModuleRef))
        fn = it.eval(call.func, {}, src)
    except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
        return False
    if isinstance(fn, ClassRef):
        return it.is_module_class(fn)
    if isinstance(fn, Ext) and KERAS_PATH.search(fn.path) and fn.path.endswith((".Sequential", ".Model")):
        return True  # `keras.Sequential([...])`, `Model(inputs, outputs)`: keras_layers.py, keras_graph.py
    if not isinstance(fn, FuncRef) or depth > 3:
        return False
    assigned: dict[str, list[ast.expr]] = {}
    for n in ast.walk(fn.node):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(n.value)
    for n in ast.walk(fn.node):
        if isinstance(n, ast.Return) and n.value is not None:
            v = _unwrap(n.value)
            # a name assigned on several branches (`if name == 'a': net = A() elif ...`, then wrapped)
            options = [_unwrap(a) for a in assigned.get(v.id, [])] if isinstance(v, ast.Name) else [v]
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Subscript) and isinstance(v.func.value, ast.Name):
                # `return models[name](**kwargs)` over a local table `models = {'fcn': get_fcn, ...}`
                options += [ast.Call(e, [], []) for d in assigned.get(v.func.value.id, []) if isinstance(d, ast.Dict)
                            for e in d.values[:8]]
            if any(isinstance(o, ast.Call) and _builds_model(it, fn.src, o, depth + 1) for o in options):
                return True
    return False


def _off_path(tree: ast.Module, resolve: Callable[[str], tuple[bool, Any, list[str]]],
              it: Interp | None = None, src: Source | None = None) -> set[int]:
    """Statements in a branch the run does not take (`if opt.distill == 'crd':` when the command picks `kd`), by
    the analyzer's resolver, or by the interpreter over values the resolver knows (`args.arch.lower() == 'a'`,
    conditions.py); a condition neither can settle leaves both branches on the path."""
    off: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        try:
            ok, val, _ = resolve(ast.unparse(node.test))
        except Exception:  # noqa: BLE001 - an expression the resolver cannot read settles nothing
            continue
        if not ok and it is not None and src is not None:
            val = settled_by_interp(it, src, node.test, resolve)
            ok = val is not None
        if ok and isinstance(val, bool):
            for st in node.orelse if val else node.body:
                off.update(id(n) for n in ast.walk(st))
    return off


def count_entry_model(read_text: Callable[[str], str | None], import_file: Callable[[str, str], str | None],
                      resolve: Callable[[str], tuple[bool, Any, list[str]]],
                      entry: str, input_widths: tuple[int, ...] | None = None,
                      list_files: Callable[[], list[str]] | None = None) -> tuple[int, list[str]] | None:
    """The parameters of the models the entry script builds; `input_widths` are the widths of a Flax model's
    inputs when the job fixes them (an RL job's observation and action sizes), see flax_modules.py; `list_files`
    lists the job's files, for the name -> class tables its decorators fill (registries.py)."""
    it = Interp(read_text, import_file, resolve)
    it.list_py = list_files  # type: ignore[attr-defined]
    src = it.source(entry, entry=True)
    if src is None:
        return None
    by_name: dict[str, list[tuple[int, list[str]]]] = {}
    made_by: dict[str, list[ast.Assign]] = {}  # the assignments that built each class
    named = [(st.targets[0].id, st) for st in _assignments(src.tree)]  # type: ignore[attr-defined]
    names = {n for n, _ in named}
    # a helper the script calls for a value (`model_t = load_teacher(path)`) is evaluated at that call, with its
    # arguments, never on its own out of context
    called = {_unwrap(st.value).func.id for _, st in named if isinstance(_unwrap(st.value), ast.Call)
              and isinstance(_unwrap(st.value).func, ast.Name)}  # type: ignore[attr-defined]
    inside = {id(n) for f in src.tree.body if isinstance(f, ast.FunctionDef) and f.name in called
              for n in ast.walk(f)}
    off = _off_path(src.tree, resolve, it, src)
    for name, st in [*named, *_self_assignments(it, src)]:
        value = _unwrap(_with_added_layers(src.tree, st))
        while (moved := moved_argument(it, src, value)) is not None:  # `trans_to_cuda(Net(opt))`: passthrough.py
            value = _unwrap(moved)
        if id(st) in inside or id(st) in off or (name.endswith("_t") and f"{name[:-2]}_s" in names):
            continue  # ... and distillation's `model_t` beside `model_s`: the teacher is not trained
        if AUX_TARGET.search(name) or not isinstance(value, ast.Call):
            continue
        if not _builds_model(it, src, value):  # a trainer object from another file may build it (trainer_objects.py)
            for cname, n, ev in trainer_models(it, src, value, _builds_model, AUX_TARGET) or []:
                by_name.setdefault(cname, []).append((n, ev))
                made_by.setdefault(cname, []).append(st)
            learned = learner_flax_models(it, src, _method_env(it, src, st), value, input_widths, AUX_TARGET)
            if learned is None:  # a learner object's Flax definitions (flax_learners.py) that cannot be counted
                return None
            for cname, n, ev in learned:
                by_name.setdefault(cname, []).append((n, ev))
                made_by.setdefault(cname, []).append(st)
            continue
        it.evidence = [f"{entry}:{st.lineno}"]
        it.steps = 0
        try:
            local = not isinstance(st.targets[0], ast.Name) or is_flax_call(it, src, value)
            env = _method_env(it, src, st) if local else path_env(it, src, st, value, off, resolve)
            it.steps = 0
            got = it.eval(value, env, src)
            if isinstance(got, Mod) and "__flax__" in got.attrs and got.total() == 0:
                got.own = flax_root_total(it, got, input_widths)
        except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
            return None  # a model the job builds that cannot be counted: no partial sums
        if isinstance(got, Mod) and (n := got.total()) > 0:
            by_name.setdefault(got.name, []).append((n, list(it.evidence)))
            made_by.setdefault(got.name, []).append(st)
    for st in _assignments(src.tree, tuples=True):  # `model, criterion, post = build(args)`: tuple_builders.py
        if id(st) in off:
            continue
        try:
            for cname, n, ev in tuple_models(it, src, st, _unwrap(st.value), _builds_model, AUX_TARGET) or []:
                by_name.setdefault(cname, []).append((n, ev))
                made_by.setdefault(cname, []).append(st)
        except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
            return None  # the builder makes a local model that cannot be counted: no partial sums
    if not by_name:  # nothing built in the entry script: a training function of another file it calls may build it
        got_called = _called_function_models(it, src, off)
        if got_called is None:
            return None
        by_name = {cname: [(n, ev)] for cname, n, ev in got_called}
    if alternatives(src.tree, list(made_by.values())):
        return None  # `if a: model = A() elif b: model = B()` on an unsettled condition: one of them trains, not both
    total, ev = 0, []
    for counts in by_name.values():
        # one class built twice is one model (a worker's or target network's copy); built with different
        # sizes on different paths, which one runs is not settled here
        if len({n for n, _ in counts}) != 1:
            return None
        total += counts[0][0]
        ev.extend(e for e in counts[0][1] if e not in ev)
    return total, ev


def _called_function_models(it: Interp, src: Source, off: set[int]) -> list[tuple[str, int, list[str]]] | None:
    """The one model a function of another file, called by the entry script for its effect, builds
    (called_functions.py); None when none does, or calls to different functions build models."""
    out: list[tuple[str, int, list[str]]] = []
    for st in ast.walk(src.tree):
        if isinstance(st, ast.ClassDef):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and id(st) not in off:
            try:
                got = called_models(it, src, st.value, _builds_model, AUX_TARGET, _unwrap)
            except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
                return None  # the function builds a model that cannot be counted
            if got:
                out.extend(got)
    return out if len({(c, n) for c, n, _ in out}) == 1 else None


# the config section that describes the trained model, and the keys that name a class to build
MODEL_SECTION = re.compile(r"^(model|net|network|module|lit_module|policy)$")
_TARGET_KEYS = ("_target_", "class_path")
_NOT_ARGS = {"_target_", "_partial_", "_recursive_", "_convert_", "class_path", "init_args"}


def _nested(items: list[tuple[str, Any]], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in items:
        if not key.startswith(prefix + "."):
            continue
        cur = out
        parts = key[len(prefix) + 1:].split(".")
        for part in parts[:-1]:
            nxt = cur.setdefault(part, {})
            if not isinstance(nxt, dict):
                break
            cur = nxt
        else:
            cur[parts[-1]] = value
    return out


def _build_from_config(it: Interp, spec: dict[str, Any]) -> Any:
    """`{_target_: pkg.mod.Class, dim: 64, sub: {_target_: ...}}` (Hydra) or `{class_path, init_args}`
    (LightningCLI): the job's own class built with the config's arguments; nested targets first."""
    target = spec.get("_target_") or spec.get("class_path")
    args_spec = spec.get("init_args", spec) if "class_path" in spec else spec
    kwargs = {k: (_build_from_config(it, v) if isinstance(v, dict) and any(t in v for t in _TARGET_KEYS) else v)
              for k, v in args_spec.items() if k not in _NOT_ARGS}
    if not isinstance(target, str) or "." not in target:
        return Unknown("a config entry without a class")
    mod, _, name = target.rpartition(".")
    rel = it.import_file(mod, "")
    src = it.source(rel) if rel else None
    if src is None:
        partial = spec.get("_partial_") is True
        return Unknown(f"{target} is not in the job's sources", maybe_module=not partial)
    return it.call(it.global_(src, name), [], kwargs, f"{rel}")


def count_config_model(read_text: Callable[[str], str | None], import_file: Callable[[str, str], str | None],
                       resolve: Callable[[str], tuple[bool, Any, list[str]]],
                       items: list[tuple[str, Any]]) -> tuple[int, list[str], str] | None:
    """The model a config builds from the job's own classes (`model: {_target_: src.models.Net, width: 64}`):
    the outermost model section whose class is a local `nn.Module`. Returns (params, evidence, the key naming
    the class)."""
    it = Interp(read_text, import_file, resolve)
    for key, value in sorted(items, key=lambda kv: kv[0].count(".")):
        section, _, leaf = key.rpartition(".")
        if leaf not in _TARGET_KEYS or not isinstance(value, str) or not section \
                or not MODEL_SECTION.match(section.rsplit(".", 1)[-1]):
            continue
        mod, _, name = value.rpartition(".")
        rel = import_file(mod, "") if mod else None
        src = it.source(rel) if rel else None
        cls = it.global_(src, name) if src else None
        if not isinstance(cls, ClassRef) or not it.is_module_class(cls):
            continue
        it.evidence = []
        try:
            got = _build_from_config(it, _nested(items, section))
        except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
            return None
        if isinstance(got, Mod) and (n := got.total()) > 0:
            return n, list(dict.fromkeys(it.evidence)), key
        return None
    return None


__all__ = ["GiveUp", "Mod", "count_config_model", "count_entry_model"]
