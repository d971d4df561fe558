"""What a call evaluates to in the module-size interpreter: `torch.nn` layers, the job's own classes and
functions, a few builtins and tensor constructors; any other external call is opaque."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from schedmate.codeprof import known
from schedmate.codeprof.static.modelsize import flax_modules as flax
from schedmate.codeprof.static.modelsize import pyfuncs, shapes, tf_graph
from schedmate.codeprof.static.modelsize.interp import (
    _PARAM_FREE_EXT,
    _SAME_MODULE,
    ClassRef,
    Ext,
    FuncRef,
    Ref,
    Tensor,
    Unknown,
)
from schedmate.codeprof.static.modelsize.keras_graph import MERGE_FUNCS, call_layer, functional_model, merge
from schedmate.codeprof.static.modelsize.keras_layers import KERAS_PATH, KLayer, sequential_params
from schedmate.codeprof.static.modelsize.layer_subclass import layer_subclass
from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod, build_nn
from schedmate.codeprof.static.modelsize.registries import registry_lookup
from schedmate.codeprof.static.modelsize.rl_policies import env_spaces
from schedmate.codeprof.static.modelsize.timm_blocks import TIMM_BLOCKS, timm_block
from schedmate.codeprof.static.modelsize.values import STR_METHODS

if TYPE_CHECKING:
    from schedmate.codeprof.static.modelsize.interp import Interp

_CASTS = {"builtins.int": int, "builtins.float": float, "builtins.str": str}
_TENSOR_NEW = {"zeros", "ones", "randn", "rand", "empty", "Tensor", "FloatTensor", "full"}
# bases a module class may have besides its own local classes: they hold no parameters themselves
_NEUTRAL_BASE = re.compile(r"(^|\.)(Module|LightningModule|object|ABC|Generic|HyperparametersMixin|Sequential|"
                           r"ModuleList|ModuleDict)$")
_FEATURE_GETTERS = {"IntermediateLayerGetter", "create_feature_extractor"}
_CONTAINER_BASE = re.compile(r"(^|\.)(Sequential|ModuleList|ModuleDict)$")


def call_value(it: Interp, fn: Any, args: list[Any], kwargs: dict[str, Any], where: str) -> Any:
    if isinstance(fn, ClassRef):
        if flax.is_flax_class(it, fn):
            return flax.instantiate_flax(it, fn, args, kwargs)
        return instantiate(it, fn, args, kwargs, where)
    if isinstance(fn, Mod) and "__flax__" in fn.attrs:  # `Dense(...)(x)`, `Critic(...)(s, a)`: flax_modules.py
        return flax.call_module(it, fn, args, kwargs)
    if isinstance(fn, flax.FLayer):
        return flax.call_layer(it, fn, args, kwargs)
    if isinstance(fn, flax.VMapped):
        return flax.instantiate_flax(it, fn.cls, args, kwargs, fn.copies)
    if isinstance(fn, flax.Returns):
        return fn.value
    if isinstance(fn, FuncRef):
        if isinstance(fn.bound, Mod) and fn.bound.plain \
                and (got := registry_lookup(it, fn, args, kwargs)) is not None:
            return got  # `MODELS.get(args.arch)`: the table its decorators fill (registries.py)
        return it.run_function(fn, args, dict(kwargs))
    if isinstance(fn, pyfuncs.Partial):  # `norm_layer(dim)` where `norm_layer = partial(nn.LayerNorm, eps=1e-6)`
        return pyfuncs.call_partial(it, fn, args, kwargs, where)
    if isinstance(fn, tuple) and fn and fn[0] == "super":
        _, sup, name = fn
        for c in it.mro(sup.cls)[1:]:
            got = it.class_attr(c, name)
            if isinstance(got, FuncRef) and got.owner is c:
                return it.run_function(FuncRef(got.node, got.src, None, sup.obj, c), args, dict(kwargs))
        for c in it.mro(sup.cls):  # `class ConvBNReLU(nn.Sequential)`: super().__init__(conv, bn, act)
            for b in c.node.bases:
                m = _CONTAINER_BASE.search(ast_text(b))
                if m and name == "__init__" and isinstance(sup.obj, Mod):
                    sup.obj.children.extend(build_nn(m.group(2), args, kwargs).children)
                    return None
        return None  # nn.Module.__init__ and the like
    if isinstance(fn, tuple) and fn and fn[0] == "tensor":  # `x.transpose(1, 2)` of a shaped tensor
        return shapes.method(it, fn[1], fn[2], args, kwargs)
    if isinstance(fn, tuple) and fn and fn[0] == "method":
        return method(it, fn[1], fn[2], args, kwargs)
    if isinstance(fn, Ext):
        return external(it, fn.path, args, kwargs)
    if isinstance(fn, KLayer):  # `Conv2D(64, 3)(x)`: a Keras layer called on a tensor (keras_graph.py)
        return call_layer(fn, args, kwargs)
    if isinstance(fn, (Ref, Unknown)):
        return Unknown(f"call of {getattr(fn, 'src', None) or getattr(fn, 'why', '?')}", maybe_module=True)
    return Unknown("call of a value", maybe_module=True)


def instantiate(it: Interp, cls: ClassRef, args: list[Any], kwargs: dict[str, Any], where: str) -> Mod:
    module = it.is_module_class(cls)
    if not module and (layer := layer_subclass(it, cls, args, kwargs)) is not None:
        return layer  # `class SyncBN(_BatchNorm)`: torch's layer under the job's name (layer_subclass.py)
    obj = Mod(cls.node.name, plain=not module)
    obj.attrs["__class__"] = cls
    if module:
        for c in it.mro(cls):
            for b in c.node.bases:
                got = it.eval(b, {}, c.src)
                if not isinstance(got, ClassRef) and not _NEUTRAL_BASE.search(ast_text(b)):
                    raise GiveUp(f"{cls.node.name} builds on {ast_text(b)}, whose layers are not in the job's sources")
        it.evidence.append(f"{cls.src.rel}:{cls.node.lineno}")
    init = it.class_attr(cls, "__init__")
    if isinstance(init, FuncRef):
        it.run_function(FuncRef(init.node, init.src, None, obj, init.owner), args, dict(kwargs))
    else:
        obj.attrs.update(kwargs)
    return obj


def ast_text(node: Any) -> str:
    import ast

    return ast.unparse(node)


def method(it: Interp, base: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if isinstance(base, Mod) and name == "param" and "__flax__" in base.attrs:
        return flax.param(it, args)
    if isinstance(base, Mod):
        if name in _SAME_MODULE:
            return base
        if name in {"add_module", "register_module", "register_parameter"} and len(args) >= 2:
            if isinstance(args[1], Mod):
                base.attrs[str(it.concrete(args[0]))] = args[1]
            return None
        return Unknown(f"module method {name}")
    if isinstance(base, list):
        if name == "append" and len(args) == 1:
            base.append(args[0])
            return None
        if name == "extend" and len(args) == 1:
            base.extend(it.concrete_seq(args[0]))
            return None
        if name == "insert" and len(args) == 2:
            base.insert(it.concrete(args[0]), args[1])
            return None
        if name == "index" and len(args) == 1:
            return base.index(it.concrete(args[0]))
    if isinstance(base, float) and name == "item" and not args:  # an element of `torch.linspace(...)`
        return base
    if isinstance(base, str) and name in STR_METHODS:  # `"8192-8192".split("-")`, `name.startswith("vit")`
        return pyfuncs.str_method(it, base, name, args, kwargs)
    if isinstance(base, dict):
        if name in {"items", "keys", "values"}:
            return list(getattr(base, name)())
        if name == "get":
            return base.get(it.concrete(args[0]), args[1] if len(args) > 1 else None)
    return Unknown(f"method {name}")


def external(it: Interp, path: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if path.startswith(("torch.nn.modules.", "torch.nn.parameter.")) and path.count(".") == 4:
        path = "torch.nn." + path.rsplit(".", 1)[1]  # `from torch.nn.modules.linear import Linear`: nn.Linear itself
    parts = path.split(".")
    last = parts[-1]
    if parts[0] == "builtins":
        return builtin(it, last, args, kwargs)
    if path in pyfuncs.PARTIAL_PATHS:
        return pyfuncs.make_partial(args, kwargs)
    if parts[0] in {"flax", "jax"} and (got := flax.external(it, path, args, kwargs)) is not None:
        return got
    if parts[0] == "tensorflow" and (g := getattr(it, "tf_graph", None)) is not None \
            and (got := tf_graph.external(it, g, path, args, kwargs)) is not None:
        return got
    if parts[0] == "gymnax" and last == "make":
        return flax.gymnax_make(it, args)
    if path.startswith(("torch.nn.", "nn.")) and len(parts) >= 2 and parts[-2] == "nn":
        if last == "Parameter":
            x = args[0] if args else kwargs.get("data")
            if isinstance(x, Tensor):
                return shapes.parameter(x)  # keeps its shape for the constructor's queries (shapes.py)
            if kwargs.get("requires_grad") is False:  # a frozen lookup table (a noise schedule): never trained
                return Mod("Parameter", 0)
            raise GiveUp("nn.Parameter of an unknown tensor")
        return build_nn(last, [it.concrete(a) if not isinstance(a, Mod) else a for a in args],
                        {k: it.concrete(v) if not isinstance(v, Mod) else v for k, v in kwargs.items()})
    if KERAS_PATH.search(path) and last[:1].isupper():  # a Keras layer, or a Sequential list of them
        if last == "Sequential":
            items = it.concrete_seq(args[0]) if args else kwargs.get("layers")
            return Mod("Sequential", sequential_params(list(items or [])))
        if last in {"Model", "Functional"}:
            return functional_model(args, kwargs)
        return KLayer(last, [it.concrete(a) for a in args], {k: it.concrete(v) for k, v in kwargs.items()})
    if KERAS_PATH.search(path) and last in MERGE_FUNCS:  # `concatenate([a, b], axis=3)`
        return merge(last, args[0] if args else kwargs.get("inputs"), kwargs.get("axis", -1))
    if parts[0] == "torch" and len(parts) == 2 and last in _TENSOR_NEW:
        shape = [it.concrete(a) for a in (args[:1] if last == "full" else args)]
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = list(shape[0])
        if not all(isinstance(s, int) and s > 0 for s in shape):
            raise GiveUp("tensor of unknown shape")
        return Tensor(math.prod(shape), tuple(shape))
    if parts[0] in {"gym", "gymnasium"} and last == "make" and args:  # sizes from `env.observation_space.shape`
        return env_spaces(it.concrete(args[0]))
    if parts[0] in {"numpy", "math"} and last in {"prod", "product"}:
        return math.prod(it.concrete(it.concrete_seq(args[0])))
    if parts[0] in {"torch", "numpy"} and last == "linspace" and len(args) == 3 and not kwargs:
        lo, hi, n = (it.concrete(a) for a in args)  # the stochastic-depth rates of a ViT's blocks, one per block
        return pyfuncs.Steps(float(lo + (hi - lo) * i / (n - 1)) if n > 1 else float(lo) for i in range(int(n)))
    if parts == ["itertools", "repeat"] and len(args) == 2 and not kwargs:  # `tuple(repeat(x, 2))`: timm's to_2tuple
        return [args[0]] * int(it.concrete(args[1]))
    if parts[0] == "math" and last in {"ceil", "floor", "sqrt", "log2", "log", "erf", "exp", "pow"}:
        return getattr(math, last)(*[it.concrete(a) for a in args])
    if (parts[0] == "torch" or last.endswith("_")) and (got := shapes.external(it, last, args, kwargs)) is not None:
        return got  # `torch.cat`, `F.interpolate` of shaped tensors, an in-place initialiser
    if path == "copy.deepcopy" and len(args) == 1 and isinstance(args[0], Mod):  # a stack of copies of a block
        from schedmate.codeprof.static.modelsize.clones import clone

        return clone(args[0])
    if last in _FEATURE_GETTERS and args and isinstance(args[0], Mod):  # torchvision's feature-map wrapper
        return args[0]  # keeps the backbone's layers (its published size, classifier head included: a few percent)
    if _PARAM_FREE_EXT.search(last):
        return Mod(last)
    if parts[0] == "timm" and last in TIMM_BLOCKS:  # `from timm.models.vision_transformer import PatchEmbed`
        return timm_block(it, last, args, kwargs, path)
    known_size = _well_known(it, parts, args, kwargs)
    if known_size is not None:
        return known_size
    # tensors, numbers and files from torch's functions, numpy, math, os: never a module with parameters
    harmless = parts[0] in {"numpy", "math", "os", "functools", "itertools", "collections", "copy", "random",
                            "logging", "warnings", "queue", "threading", "multiprocessing", "time", "re", "json"} or (parts[0] == "torch" and "nn" not in parts[:-1]
                                                      and not last[:1].isupper()) \
        or parts[:2] in (["torch", "optim"], ["torch", "distributions"])  # an optimizer or LR schedule a module keeps holds no weights of its own
    return Unknown(f"{path}(...)", maybe_module=not harmless)


def _well_known(it: Interp, parts: list[str], args: list[Any], kwargs: dict[str, Any]) -> Mod | Unknown | None:
    """A published architecture built by its library inside the job's module: `torchvision.models.resnet50()`,
    `timm.create_model("vit_small_patch16_224")`, `AutoModel.from_pretrained("bert-base-uncased")` -> its
    published size (the job's own layers around it are still counted). None when the call is not one."""
    last = parts[-1]
    if last == "from_pretrained" and len(parts) > 1 and re.search(
            r"Tokenizer|Processor|Config|FeatureExtractor|Scheduler", parts[-2]):
        return Unknown(f"{parts[-2]}.from_pretrained: not a module")
    if parts[0] == "torchvision" and "models" in parts[:-1] and last[:1].islower():
        name: Any = last
    elif (parts[0] == "timm" and last == "create_model") or last == "from_pretrained":
        raw = args[0] if args else kwargs.get("model_name", kwargs.get("pretrained_model_name_or_path"))
        name = it.concrete(raw) if raw is not None else None
    else:
        return None
    hit = known.lookup_model(name) if isinstance(name, str) else None
    if hit is None:
        raise GiveUp(f"{'.'.join(parts)}({name!r}): not a model of known size")
    return Mod(hit[0], int(hit[2]))


def builtin(it: Interp, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if name == "print":
        return None
    if name == "getattr":
        got = it.attr(args[0], str(it.concrete(args[1])))
        return args[2] if isinstance(got, Unknown) and len(args) > 2 else got
    if name in {"list", "tuple"}:
        seq = it.concrete_seq(args[0]) if args else []
        return seq if name == "list" else tuple(seq)
    if name == "dict":
        return dict(kwargs) if not args else dict(it.concrete(args[0]))
    if name in {"zip", "enumerate", "reversed", "sorted"}:
        seqs = [it.concrete_seq(a) for a in args[:1 if name != "zip" else None]]
        if name == "zip":
            return [tuple(x) for x in zip(*seqs, strict=False)]
        if name == "enumerate":
            start = it.concrete(kwargs.get("start", args[1] if len(args) > 1 else 0))
            return [(i + start, x) for i, x in enumerate(seqs[0])]
        return list(reversed(seqs[0])) if name == "reversed" else sorted(it.concrete(seqs[0]))
    if name == "map" and len(args) == 2 and isinstance(args[0], Ext) and args[0].path in _CASTS:
        cast = _CASTS[args[0].path]
        try:
            return [cast(x) for x in it.concrete(it.concrete_seq(args[1]))]
        except (TypeError, ValueError) as e:
            raise GiveUp(f"map(): {e}") from e
    if name == "isinstance":
        return pyfuncs.is_instance(it, args)
    if name == "hasattr":
        return pyfuncs.has_attr(it, args)
    if name == "callable" and len(args) == 1:
        return pyfuncs.is_callable(args[0])
    if name == "setattr" and len(args) == 3 and isinstance(args[0], Mod) and not kwargs:
        if isinstance(args[2], Unknown) and args[2].maybe_module:  # `setattr(self, f"layer{i}", build(...))`
            raise GiveUp(f"setattr of a value that cannot be followed ({args[2].why})")
        args[0].attrs[str(it.concrete(args[1]))] = args[2]  # registered like `self.<name> = value`
        return None
    if name in {"setattr", "map", "super", "callable"}:
        return Unknown(f"builtin {name}")
    vals = [it.concrete(a) for a in args]
    fn = {"int": int, "float": float, "len": len, "range": range, "max": max, "min": min, "sum": sum, "abs": abs,
          "round": round, "bool": bool, "str": str}[name]
    try:
        return fn(*vals)
    except (TypeError, ValueError) as e:
        raise GiveUp(f"{name}(): {e}") from e
