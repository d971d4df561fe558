"""Flax (`flax.linen`) modules: layers are built where they are called (`nn.Dense(64)(x)` under `@nn.compact`)
or in `setup()`, and a layer's input width is the width of the tensor it is called on, so the count follows
the feature width (last dimension) through `__call__`, as the torch interpreter follows `in_features`.

    class Q(nn.Module):
        hidden: int = 64                      fields: positional or keyword, defaults from the class body
        @nn.compact
        def __call__(self, s, a):
            x = jnp.concatenate([s, a], -1)   width in0 + in1
            x = nn.relu(nn.Dense(self.hidden)(x))
            return nn.Dense(1)(x)             -> (in0 + in1) * 64 + 64 + 65

The inputs of the module the job builds have symbolic widths (`in0`, `in1`, ...), resolved at the end from the
widths the caller knows (an RL job's observation and action sizes); a count left with an unknown input width is
no count. `nn.vmap(Cls, axis_size=N)` counts N copies, `self.param(name, init, shape)` its shape. Only the
last dimension is tracked: a flatten of spatial dimensions gives up.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import ClassRef, Ext, FuncRef, Ref, Unknown

Lin = dict[str, int]  # a linear form over input-width symbols; "" is the constant


def _lin(v: Any, what: str) -> Lin:
    if isinstance(v, dict):
        return v
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise GiveUp(f"flax {what} is not a known positive integer ({v!r})")
    return {"": v}


def _add(*forms: Lin) -> Lin:
    out: Lin = {}
    for f in forms:
        for k, c in f.items():
            out[k] = out.get(k, 0) + c
    return out


def _scale(f: Lin, n: int) -> Lin:
    return {k: c * n for k, c in f.items()}


@dataclass(eq=False)
class FTensor:
    """A symbolic activation: its feature width (the last dimension). Arithmetic keeps it (`jnp.exp(log_std) * t`,
    a residual sum)."""

    width: Lin

    def _same(self, other: Any) -> FTensor:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same


@dataclass(eq=False)
class FLayer:
    """A `flax.linen` layer object; its parameters are known once it is called on a tensor."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]

    def arg(self, i: int, name: str, default: Any = None) -> Any:
        return self.kwargs.get(name, self.args[i] if i < len(self.args) else default)


@dataclass(eq=False)
class VMapped:
    """`nn.vmap(Cls, ..., axis_size=N)`: a class whose instances hold N copies of the parameters."""

    cls: ClassRef
    copies: int


@dataclass(eq=False)
class Returns:
    """A callable that returns a fixed value (`env.action_space(env_params)` of a known environment)."""

    value: Any


@dataclass
class Trace:
    counted: dict[int, tuple[Any, Lin]] = field(default_factory=dict)  # id(layer) -> (layer, its parameters)

    def add(self, owner: Any, n: Lin) -> None:
        self.counted.setdefault(id(owner), (owner, n))

    def total(self) -> Lin:
        return _add(*(n for _, n in self.counted.values()))


# a field of the built module the job leaves to its environment: the number of actions (its output width)
_ACTION_FIELD = re.compile(r"^(action_dim|action_size|num_actions|n_actions|act_dim|action_shape|num_outputs|"
                           r"num_output_units|n_outputs|output_dim)$")
_ACTIVATIONS = {"relu", "tanh", "gelu", "silu", "swish", "sigmoid", "elu", "selu", "leaky_relu", "softplus",
                "softmax", "log_softmax", "celu", "glu", "hard_tanh", "relu6", "mish", "log_sigmoid",
                "avg_pool", "max_pool", "dropout", "normalize", "standardize"}


def is_flax_class(it: Any, cls: ClassRef) -> bool:
    for c in it.mro(cls):
        for b in c.node.bases:
            try:
                got = it.eval(b, {}, c.src)
            except GiveUp:
                continue
            if isinstance(got, Ext) and got.path.startswith("flax.") and got.path.endswith(".Module"):
                return True
    return False


def is_flax_call(it: Any, src: Any, call: ast.Call) -> bool:
    """Whether a call builds a Flax module of the job's (its sizes often come from the enclosing function's
    locals: `env, env_params = gymnax.make(...)` then `Policy(env.action_space(env_params).n)`)."""
    try:
        fn = it.eval(call.func, {}, src)
    except (GiveUp, RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError):
        return False
    return isinstance(fn, ClassRef) and is_flax_class(it, fn)


def _fields(cls: ClassRef, it: Any) -> list[tuple[str, ast.expr | None, ClassRef]]:
    out: list[tuple[str, ast.expr | None, ClassRef]] = []
    for c in reversed(it.mro(cls)):  # a dataclass: the base's fields first
        for st in c.node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                out = [f for f in out if f[0] != st.target.id] + [(st.target.id, st.value, c)]
    return out


def instantiate_flax(it: Any, cls: ClassRef, args: list[Any], kwargs: dict[str, Any], copies: int = 1) -> Mod:
    """A Flax module object: its dataclass fields bound (positional in field order, then keywords)."""
    obj = Mod(cls.node.name)
    obj.attrs.update({"__class__": cls, "__flax__": copies, "param": ("method", obj, "param")})
    fields = _fields(cls, it)
    for i, (name, default, owner) in enumerate(fields):
        if i < len(args):
            obj.attrs[name] = args[i]
        elif name in kwargs:
            obj.attrs[name] = kwargs[name]
        elif default is not None:
            obj.attrs[name] = it.eval(default, {}, owner.src)
        else:
            obj.attrs[name] = Unknown(f"flax field {name} not given")
    setup = it.class_attr(cls, "setup")
    if isinstance(setup, FuncRef):
        it.run_function(FuncRef(setup.node, setup.src, None, obj, setup.owner), [], {})
    return obj


def _trace(it: Any) -> Trace:
    tr = getattr(it, "flax_trace", None)
    if tr is None:
        tr = it.flax_trace = Trace()
    return tr


def call_module(it: Any, obj: Mod, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`module(x, ...)`: run its `__call__` (N vmapped copies count N times)."""
    fn = it.class_attr(obj.attrs["__class__"], "__call__")
    if not isinstance(fn, FuncRef):
        raise GiveUp(f"flax module {obj.name} without __call__")
    copies = obj.attrs.get("__flax__", 1)
    outer = _trace(it)
    if copies > 1:
        it.flax_trace = Trace()
    try:
        out = it.run_function(FuncRef(fn.node, fn.src, None, obj, fn.owner), args, dict(kwargs))
    finally:
        inner, it.flax_trace = it.flax_trace, outer
    if copies > 1:
        outer.add(obj, _scale(inner.total(), copies))
    return out


def _tensor(v: Any, what: str) -> FTensor:
    if isinstance(v, FTensor):
        return v
    raise GiveUp(f"flax {what} called on something whose width is not followed")


def call_layer(it: Any, layer: FLayer, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if layer.name == "Sequential":
        x: Any = args[0] if args else None
        for sub in it.concrete_seq(layer.arg(0, "layers")):
            x = it.call(sub, [x], {}, "flax Sequential")
        return x
    x = _tensor(args[0] if args else kwargs.get("inputs", kwargs.get("x")), layer.name)
    name, tr = layer.name, _trace(it)

    def get(i: int, key: str, default: Any = None) -> Any:  # only the arguments that size the layer are read
        return it.concrete(layer.arg(i, key, default))

    if name in {"Dense", "Conv", "ConvTranspose"}:
        f = _lin(get(0, "features"), "features")
        if set(f) != {""} and set(x.width) != {""}:
            raise GiveUp("flax layer whose input and output widths are both symbolic")
        k = 1
        if name != "Dense":
            ks = get(1, "kernel_size")
            k = math.prod(_lin(d, "kernel_size")[""] for d in (tuple(ks) if isinstance(ks, (list, tuple)) else (ks,)))
        weights = _scale(f, k * x.width[""]) if set(x.width) == {""} else _scale(x.width, k * f[""])
        tr.add(layer, _add(weights, f if get(99, "use_bias", True) is not False else {}))
        return FTensor(f)
    if name in {"LayerNorm", "BatchNorm", "GroupNorm", "RMSNorm"}:
        scale = get(99, "use_scale", True) is not False
        centre = name != "RMSNorm" and get(99, "use_bias", True) is not False
        tr.add(layer, _scale(x.width, int(scale) + int(centre)))
        return x
    if name == "Embed":
        n, f = _lin(get(0, "num_embeddings"), "num_embeddings")[""], _lin(get(1, "features"), "features")[""]
        tr.add(layer, {"": n * f})
        return FTensor({"": f})
    if name == "Dropout":
        return x
    raise GiveUp(f"flax layer {name} is not counted here")


def external(it: Any, path: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`flax.linen.<name>(...)` and `jax.numpy` helpers on symbolic tensors; None when not one of them."""
    parts = path.split(".")
    last = parts[-1]
    if parts[:2] == ["flax", "linen"] or parts[:1] == ["flax"] and len(parts) == 2:
        if last == "vmap":
            cls = args[0] if args else kwargs.get("target")
            n = kwargs.get("axis_size")
            if not isinstance(cls, ClassRef) or not isinstance(n := it.concrete(n), int) or n <= 0:
                raise GiveUp("flax vmap of an unknown module or axis size")
            return VMapped(cls, n)
        if last[:1].isupper():
            return FLayer(last, list(args), dict(kwargs))  # read when called: an unused layer needs no sizes
        if last in _ACTIVATIONS and args:
            return args[0]
    if parts[0] == "jax" and "numpy" in parts and last in {"concatenate", "hstack"} and args:
        ts = [_tensor(t, "concatenate") for t in it.concrete_seq(args[0])]
        axis = kwargs.get("axis", args[1] if len(args) > 1 else -1)
        if it.concrete(axis) != -1:
            raise GiveUp("flax concatenate on an axis other than the features")
        return FTensor(_add(*(t.width for t in ts)))
    if parts[0] == "jax" and (last in _ACTIVATIONS or last in {"tanh", "exp", "clip"}) and args \
            and isinstance(args[0], FTensor):
        return args[0]
    return None


def gymnax_make(it: Any, args: list[Any]) -> Any:
    """`env, env_params = gymnax.make("CartPole-v1")`: the environment's `observation_space(params)`,
    `action_space(params)` and `num_actions` from the table of well-known environments (rl_policies.py)."""
    from schedmate.codeprof.static.modelsize.rl_policies import env_dims, env_spaces

    name = it.concrete(args[0]) if args else None
    space = env_spaces(name)
    if not isinstance(space, Mod):
        return space
    env = Mod("gymnax-env", plain=True)
    env.attrs.update({"observation_space": Returns(space.attrs["observation_space"]),
                      "action_space": Returns(space.attrs["action_space"]),
                      "num_actions": (env_dims(name) or (0, 0, False))[1]})
    return (env, None)


def param(it: Any, args: list[Any]) -> FTensor:
    """`self.param("log_std", init, (action_dim,))`: its shape's size; `self.param("log_alpha", lambda key:
    jnp.array([0.0]))`: the size its initialiser returns (flax_params.py)."""
    from schedmate.codeprof.static.modelsize.flax_params import init_size

    if len(args) == 2 and (n := init_size(it, args[1])) is not None:
        _trace(it).add(("param", len(_trace(it).counted)), {"": n})
        return FTensor({"": n})
    if len(args) < 3:
        raise GiveUp("flax self.param without a shape")
    if isinstance(dims := args[2], (list, tuple)) and len(dims) == 1 and isinstance(dims[0], dict):
        _trace(it).add(("param", len(_trace(it).counted)), dims[0])  # `(self.action_dim,)`: sized by the env
        return FTensor(dims[0])
    shape = [it.concrete(d) for d in it.concrete_seq(args[2])] if isinstance(args[2], (list, tuple)) else \
        [it.concrete(args[2])]
    if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
        raise GiveUp("flax self.param of an unknown shape")
    owner = ("param", len(_trace(it).counted))
    _trace(it).add(owner, {"": math.prod(shape)})
    return FTensor({"": shape[-1] if shape else 1})


def root_total(it: Any, obj: Mod, widths: tuple[int, ...] | None) -> int:
    """The parameters of a Flax module the job builds: its `__call__` traced with symbolic input widths, then
    the symbols read as `widths` (in order); an input width left unknown gives up."""
    fn = it.class_attr(obj.attrs["__class__"], "__call__")
    if not isinstance(fn, FuncRef):
        raise GiveUp(f"flax module {obj.name} without __call__")
    a = fn.node.args
    names = [p.arg for p in a.args][1:]
    n_req = len(names) - len(a.defaults)
    for k, v in list(obj.attrs.items()):
        if isinstance(v, (Unknown, Ref)) and _ACTION_FIELD.search(k):  # sized by the environment
            try:
                it.concrete(v)
            except GiveUp:
                obj.attrs[k] = {"act": 1}
    it.flax_trace = Trace()
    inputs = [FTensor({f"in{i}": 1}) for i in range(n_req)]
    call_module(it, obj, inputs, {})
    total = it.flax_trace.total()
    n = total.pop("", 0)
    for sym, coef in total.items():
        i = 1 if sym == "act" else int(sym[2:])
        if coef == 0:
            continue
        if widths is None or i >= len(widths):
            raise GiveUp(f"flax module {obj.name}: width {sym} unknown")
        n += coef * widths[i]
    return n


__all__ = ["FLayer", "FTensor", "Returns", "VMapped", "call_layer", "call_module", "external", "gymnax_make", "instantiate_flax", "is_flax_call",
           "is_flax_class", "param", "root_total"]
