"""Evaluate the expressions kept by `pyast` against the job's known values, without executing them.

`args.batch_size // dist.get_world_size()` evaluates when the parameter space knows `batch_size`
and the launcher fixes the world size; anything else is unknown (never guessed).
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from schedmate.codeprof.params import ParamSpace

_HOLDERS = {
    "args",
    "cfg",
    "config",
    "conf",
    "opt",
    "opts",
    "hparams",
    "self",
    "training_args",
    "train_args",
    "model_args",
    "data_args",
    "flags",
    "FLAGS",
    "c",
    "hp",
    "params",
    "job_config",
    "options",
    "C",
}
_CONFIG_OBJECT = re.compile(r"(AttrDict|EasyDict|edict|DotMap|Munch|Namespace|HParams|ConfigDict|OmegaConf\.|"
                            r"load_config|parse_config|get_config|json\.loads?\(|yaml\.(safe_)?load|ConfigParser\()")
# configparser's typed getters (`get` with a section and a key is the same call on a parser object)
_INI_GETTERS = {"getint", "getfloat", "getboolean"}
_DTYPES = {
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp16": "fp16",
    "float32": "fp32",
    "float": "fp32",
    "fp32": "fp32",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_ARITH = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


# an item unpacked from a distributed-setup call (`get_dist_info()`, `init_dist_slurm(...)`,
# `getattr(common_utils, 'init_dist_%s' % launcher)(...)`), and the names that mean the world size
_DIST_SETUP = re.compile(r"__unpacked__\(\d+, .*(dist_info|init_dist|init_distributed|setup_dist|dist_init)", re.DOTALL)
_WORLD_NAME = re.compile(r"world_size|world|total_gpus|num_gpus|n_gpus|ngpus|gpu_num|num_replicas|num_processes")


class Unknown(Exception):
    pass


_MISSING = object()


class Resolver:
    def __init__(
        self,
        params: ParamSpace,
        env: dict[str, str],
        world: int | None,
        local_world: int | None,
        assigns: dict[str, list[dict[str, Any]]] | None = None,
        file: str = "",
    ):
        self.params = params
        self.env = env
        self.world = world
        self.local_world = local_world
        self.assigns = assigns or {}
        self.file = file
        self._stack: set[str] = set()
        # (name, k) while the expression of the k-th assignment to `name` is evaluated: in that very expression
        # the name means the value its earlier assignments give (`acc = acc // world_size`, `acc //= n`)
        self._self: list[tuple[str, int]] = []
        # names the entry binds to a loaded config (`h = AttrDict(json_config)`, `cfg = OmegaConf.load(p)`):
        # their attributes are the config's values, like `args.x`
        self.holders = set(_HOLDERS) | {
            name for name, items in self.assigns.items()
            if "." not in name and any(_CONFIG_OBJECT.search(a["expr"]) for a in items)
        }

    def eval(self, src: str) -> tuple[bool, Any, list[str]]:
        """(ok, value, evidence) for an expression's source text."""
        try:
            node = ast.parse(src.strip(), mode="eval").body
        except SyntaxError:
            return False, None, []
        ev: list[str] = []
        try:
            v = self._ev(node, ev)
        except (Unknown, TypeError, ValueError, ZeroDivisionError, OverflowError, KeyError, IndexError):
            return False, None, []
        return True, v, _dedup(ev)

    def truth(self, conditions: list[str]) -> bool | None:
        """True if every guard holds, False if one is false, None when some cannot be decided."""
        known = True
        for c in conditions:
            ok, v, _ = self.eval(c)
            if not ok:
                known = False
            elif not v:
                return False
        return True if known else None

    # ------------------------------------------------------------------
    def _lookup(self, path: str, ev: list[str]) -> Any:
        pv = self.params.get_path(path)
        if pv is not None:
            ev.extend(pv.where)
            return pv.value
        raise Unknown(path)

    def _name(self, name: str, ev: list[str]) -> Any:
        """A bare name: a computed local in the entry script (`batch_size = opt.batch_size // world`),
        else a known parameter, else the module-level assignment whose `if` guard holds."""
        if name == "__name__":
            return "__main__"  # the names resolved here are the entry script's, which runs as __main__
        if self._self and self._self[-1][0] == name:
            k = self._self[-1][1]
            got = self._from_assigns(name, ev, local=True, before=k)
            if got is _MISSING:
                got = self._from_assigns(name, ev, local=False, before=k)
            if got is not _MISSING:
                return got
            raise Unknown(f"{name} (its earlier value)")
        if name in self.assigns and name not in self._stack:
            got = self._from_assigns(name, ev, local=True)
            if got is not _MISSING:
                return got
        pv = self.params.get(name)
        if pv is not None and name in self.assigns and name not in self._stack and self._reassigned(name, pv.where):
            # a module constant of the entry script that the script sets again further down (`if ddp: acc =
            # acc // world_size`): the later assignment in force is the value the run uses
            got = self._from_assigns(name, ev, local=False)
            if got is not _MISSING:
                return got
        if pv is not None:
            ev.extend(pv.where)
            return pv.value
        if name in self.assigns and name not in self._stack:
            got = self._from_assigns(name, ev, local=False)
            if got is not _MISSING:
                return got
        raise Unknown(name)

    def _reassigned(self, name: str, where: list[str]) -> bool:
        """Is the parameter's value (read from this file) assigned again later at module level?"""
        lines = [int(w.rsplit(":", 1)[1]) for w in where
                 if w.rsplit(":", 1)[0] == self.file and w.rsplit(":", 1)[1].isdigit()]
        return bool(lines) and any(a["depth"] == 0 and a["line"] > max(lines) for a in self.assigns[name])

    def _from_assigns(self, name: str, ev: list[str], local: bool, before: int | None = None) -> Any:
        """The value of the last assignment to `name` (of the first `before` ones) whose guard holds."""
        added = name not in self._stack  # an earlier value read inside the name's own evaluation keeps its mark
        self._stack.add(name)
        items = self.assigns[name][:before] if before is not None else self.assigns[name]
        try:
            for k in range(len(items) - 1, -1, -1):
                a = items[k]
                if a["op"] not in (None, "//", "/", "*") or (a["depth"] > 0) != local:
                    continue
                # a config attribute the code overwrites (`h.num_gpus = torch.cuda.device_count()`) has that value
                # at run time: when it cannot be known (or may not apply), the config's value is not the answer
                overwrites = "." in name
                if a.get("when"):
                    self._self.append(("", -1))  # a guard reads names as they are, never an earlier value
                    try:
                        t = self.truth(a["when"])
                    finally:
                        self._self.pop()
                    if t is False or (t is None and not overwrites):
                        continue
                    if t is None:
                        raise Unknown(f"{name} (set under a condition the sources do not decide)")
                if _DIST_SETUP.match(a["expr"]) and _WORLD_NAME.fullmatch(name.rsplit(".", 1)[-1]):
                    # `rank, world_size = get_dist_info()`, `total_gpus, rank = init_dist_pytorch(...)`: the
                    # item a distributed-setup helper returns under a world-size name is the world size
                    if self.world is None:
                        raise Unknown(f"{name} (the world size)")
                    ev.append(f"{self.file}:{a['line']}")
                    return self._world(ev)
                sub: list[str] = []
                expr = a["expr"] if a["op"] is None else f"{name} {a['op']} ({a['expr']})"
                self._self.append((name, k))
                try:
                    v = self._ev(ast.parse(expr, mode="eval").body, sub)
                except (Unknown, TypeError, ValueError, ZeroDivisionError, SyntaxError, KeyError, IndexError):
                    if overwrites:
                        raise Unknown(name) from None
                    continue
                finally:
                    self._self.pop()
                ev.extend(sub)
                ev.append(f"{self.file}:{a['line']}")
                return v
        finally:
            if added:
                self._stack.discard(name)
        return _MISSING

    @contextmanager
    def holding(self, name: str) -> Iterator[None]:
        """Evaluate with `name` read from the parameter space, not re-derived from its assignments (the
        right-hand side of an assignment to `name` means its value before that assignment)."""
        added = name not in self._stack
        self._stack.add(name)
        try:
            yield
        finally:
            if added:
                self._stack.discard(name)

    def _is_ini_parser(self, owner: ast.AST) -> bool:
        """`cp` of `cp = configparser.ConfigParser()`: its `get(section, key)` reads the INI file."""
        return isinstance(owner, ast.Name) and any("ConfigParser(" in a["expr"] for a in self.assigns.get(owner.id, []))

    def _ini_get(self, node: ast.Call, ev: list[str]) -> Any:
        """configparser getters: `cp.getint("train", "epochs", fallback=10)`, `cp["train"].getint("epochs")`
        (the INI file's sections are config keys; `fallback=` is the value when the file lacks the key)."""
        owner = node.func.value  # type: ignore[attr-defined]
        args = [self._ev(a, ev) for a in node.args[:2]]
        fallback = next((k.value for k in node.keywords if k.arg == "fallback"), None)
        if isinstance(owner, ast.Subscript) and len(args) == 1:  # cp["train"].getint("epochs")
            path = [str(self._ev(owner.slice, ev)), str(args[0])]
        elif isinstance(owner, ast.Name) and owner.id in self.holders and len(args) == 2:
            path = [str(args[0]), str(args[1])]
        else:
            raise Unknown("a getter of an unknown object")
        try:
            return self._lookup(".".join(path), ev)
        except Unknown:
            if fallback is not None:
                return self._ev(fallback, ev)
            raise

    def _world(self, ev: list[str]) -> int:
        if self.world is None:
            raise Unknown("world size")
        ev.append("cmd:world_size")
        return self.world

    def _env(self, key: Any, default: Any, has_default: bool, ev: list[str]) -> Any:
        if not isinstance(key, str):
            raise Unknown("env key")
        if key in self.env:
            ev.append(f"env:{key}")
            return self.env[key]
        if has_default:
            return default
        raise Unknown(key)

    def _ev(self, node: ast.AST, ev: list[str]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, ev)
        if isinstance(node, ast.Attribute):
            from schedmate.codeprof.pyast import dotted

            d = dotted(node)
            if d is None:
                raise Unknown("attribute")
            if d.startswith(("torch.", "jnp.", "np.")) and d.rsplit(".", 1)[-1] in _DTYPES:
                return _DTYPES[d.rsplit(".", 1)[-1]]
            if d.endswith(("num_processes", "world_size", "num_replicas_in_sync")) and d.split(".")[0] in {
                "accelerator",
                "state",
                "strategy",
                "trainer",
                "self",
                "dist",
                "xm",
            }:
                if d.endswith("world_size") and d.split(".")[0] == "self":
                    pass
                else:
                    return self._world(ev)
            if (
                d in self.assigns and d not in self._stack
            ):  # `args.batch_size = args.num_envs * args.num_steps`
                for local in (True, False):
                    got = self._from_assigns(d, ev, local=local)
                    if got is not _MISSING:
                        return got
            parts = d.split(".")
            while len(parts) > 1 and parts[0] in self.holders:
                parts = parts[1:]
            if len(parts) >= 1 and parts[0] in self.holders:
                raise Unknown(d)
            if d.split(".")[0] in self.holders:
                return self._lookup(".".join(parts), ev)
            raise Unknown(d)
        if isinstance(node, ast.Subscript):
            base = node.value
            key = self._ev(node.slice, ev)
            from schedmate.codeprof.pyast import dotted

            bd = dotted(base) or ""
            if bd in {"os.environ", "environ"}:
                return self._env(key, None, False, ev)
            path: list[str] = [str(key)]
            while isinstance(base, ast.Subscript):
                path.insert(0, str(self._ev(base.slice, ev)))
                base = base.value
            if isinstance(base, ast.Name) and base.id in self.assigns and base.id not in self._stack:
                try:  # a dict built in the code: CFG = {"epochs": 50}; CFG["epochs"]
                    whole = self._name(base.id, ev)
                    for part in path:
                        whole = whole[part]
                    if not isinstance(whole, dict):
                        return whole
                except (Unknown, KeyError, TypeError, IndexError):
                    pass
            if isinstance(base, ast.Name) and base.id not in self.holders:
                path.insert(0, base.id)
            return self._lookup(".".join(path), ev)
        if isinstance(node, ast.Call):
            from schedmate.codeprof.pyast import dotted

            f = dotted(node.func) or ""
            tail = f.rsplit(".", 1)[-1]
            if f == "__unpacked__":
                raise Unknown("one item of a call's result")
            if f in {"os.environ.get", "os.getenv", "environ.get", "getenv"} and node.args:
                key = self._ev(node.args[0], ev)
                if len(node.args) > 1:
                    try:
                        d = self._ev(node.args[1], ev)
                    except Unknown:
                        return self._env(key, None, False, ev)
                    return self._env(key, d, True, ev)
                return self._env(key, None, True, ev)
            if (
                tail in {"get_world_size", "xrt_world_size", "world_size", "process_count", "device_count"}
                and not node.args
            ):
                if tail in {"device_count"}:
                    if f.endswith("cuda.device_count") and self.local_world is not None:
                        ev.append("cmd:gpus_per_node")
                        return self.local_world
                    raise Unknown(f)
                if tail == "world_size" and not f.startswith(("dist", "torch", "xm", "hvd")):
                    raise Unknown(f)
                return self._world(ev)
            if f in {"hvd.size", "horovod.size"}:
                return self._world(ev)
            if f in {"hvd.local_size"} and self.local_world is not None:
                return self.local_world
            if tail == "split" and isinstance(node.func, ast.Attribute) and len(node.args) <= 1:
                v = self._ev(node.func.value, ev)  # `args.gpu.split(",")`: "0,1,2,3" -> four ids
                sep = self._ev(node.args[0], ev) if node.args else None
                if isinstance(v, str) and (sep is None or isinstance(sep, str)):
                    return [x for x in v.split(sep) if x.strip()]
                raise Unknown("split")
            if f in {"list", "tuple", "sorted"} and len(node.args) == 1:
                inner = node.args[0]
                if isinstance(inner, ast.Call) and (dotted(inner.func) or "") == "map" and len(inner.args) == 2:
                    inner = inner.args[1]  # `list(map(int, ids))`: as many items as `ids`
                v = self._ev(inner, ev)
                if isinstance(v, (list, tuple)):
                    return list(v)
                raise Unknown(f)
            if f == "len" and len(node.args) == 1:  # `len(cfg.GPUS)`
                v = self._ev(node.args[0], ev)
                if isinstance(v, str) and re.fullmatch(r"[\[(]?[\d\s,]+[\])]?", v):  # "0,1,2,3", yacs "(0,1)"
                    return len([x for x in v.strip("()[]").split(",") if x.strip()])
                if isinstance(v, (list, tuple)):
                    return len(v)
                raise Unknown("len")
            if f in {"int", "float", "str", "bool", "max", "min", "abs", "round"}:
                vals = [self._ev(a, ev) for a in node.args]
                if f == "bool" and vals and isinstance(vals[0], str):
                    return vals[0].lower() in {"1", "true", "yes"}
                return {
                    "int": int,
                    "float": float,
                    "str": str,
                    "bool": bool,
                    "max": max,
                    "min": min,
                    "abs": abs,
                    "round": round,
                }[f](*vals)
            if isinstance(node.func, ast.Attribute) and (tail in _INI_GETTERS or tail == "get" and len(node.args) == 2
                                                         and self._is_ini_parser(node.func.value)):
                return self._ini_get(node, ev)
            if f.endswith(".get") and node.args:
                holder = f[: -len(".get")]
                key = self._ev(node.args[0], ev)
                parts = holder.split(".")
                while parts and parts[0] in self.holders:
                    parts = parts[1:]
                try:
                    return self._lookup(".".join([*parts, str(key)]), ev)
                except Unknown:
                    if len(node.args) > 1 and holder.split(".")[0] in self.holders:
                        return self._ev(node.args[1], ev)
                    raise
            raise Unknown(f)
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            a, b = self._ev(node.left, ev), self._ev(node.right, ev)
            if isinstance(node.op, ast.Pow) and isinstance(b, (int, float)) and abs(b) > 64:
                raise Unknown("pow")
            return _ARITH[type(node.op)](a, b)
        if isinstance(node, ast.UnaryOp):
            v = self._ev(node.operand, ev)
            if isinstance(node.op, ast.Not):
                return not v
            if isinstance(node.op, ast.USub):
                return -v
            return v
        if isinstance(node, ast.BoolOp):
            vals = []
            for v in node.values:
                vals.append(self._ev(v, ev))
            if isinstance(node.op, ast.And):
                out = True
                for v in vals:
                    out = out and v
                return out
            out = False
            for v in vals:
                out = out or v
            return out
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
            return _CMP[type(node.ops[0])](self._ev(node.left, ev), self._ev(node.comparators[0], ev))
        if isinstance(node, ast.IfExp):
            return self._ev(node.body if self._ev(node.test, ev) else node.orelse, ev)
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self._ev(e, ev) for e in node.elts]
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    raise Unknown("**dict")
                try:
                    out[self._ev(k, ev)] = self._ev(v, ev)
                except Unknown:
                    continue  # a partly known dict keeps its known entries
            return out
        raise Unknown(type(node).__name__)


def _dedup(xs: list[str]) -> list[str]:
    seen: list[str] = []
    for x in xs:
        if x not in seen:
            seen.append(x)
    return seen
