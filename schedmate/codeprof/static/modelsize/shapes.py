"""Shapes of tensors a module's constructor builds and reads back (interp.py): `nn.Parameter(torch.zeros(1, n, d))`
keeps its shape, so the constructor can query it (`self.pos_embed.size(1)`, `B, E, Q = x.shape`) and resize it
(`pos[:, 1:, :]`, `.transpose(1, 2)`, `.view(...)`, `F.interpolate(x, size=(h, w))`, `.flatten(2)`,
`torch.cat((a, b), dim=1)`) into a new parameter whose size is then exact. Any operation not listed here, or an
index it cannot settle, leaves the value opaque, and a parameter built from an opaque value still gives up.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp, Mod
from schedmate.codeprof.static.modelsize.values import Source, Tensor, Unknown

Interp = Any
"""The interpreter (`interp.Interp`), not imported: interp imports this module at load time."""

_SAME = {"float", "double", "half", "clone", "detach", "contiguous", "cuda", "cpu", "to", "requires_grad_",
         "normal_", "uniform_", "zero_", "fill_", "mul_", "add_", "clamp_"}


def shape_of(v: Any) -> tuple[int, ...] | None:
    if isinstance(v, Tensor) and v.shape is not None:
        return v.shape
    if isinstance(v, Mod) and v.name == "Parameter" and isinstance(v.attrs.get("shape"), tuple):
        return v.attrs["shape"]  # type: ignore[no-any-return]
    return None


def tensor(shape: Any) -> Tensor:
    shape = tuple(shape)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise GiveUp(f"tensor of unknown shape {shape!r}")
    return Tensor(math.prod(shape), shape)


def parameter(t: Tensor) -> Mod:
    m = Mod("Parameter", t.numel)
    if t.shape is not None:
        m.attrs["shape"] = t.shape
    return m


def attr(base: Any, name: str) -> Any:
    """`x.shape`, `x.data`, or a tensor method bound to `x`; None when `base` has no known shape."""
    shape = shape_of(base)
    if shape is None:
        return None
    if name == "shape":
        return shape
    if name == "data":
        return Tensor(math.prod(shape), shape)
    return ("tensor", base, name)


def _dims(args: list[Any]) -> list[Any]:
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


def method(it: Interp, base: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    shape = list(shape_of(base) or ())
    a = [it.concrete(x) for x in args]
    n = len(shape)
    if name == "size" or name == "dim":
        return (tuple(shape) if not a else shape[a[0]]) if name == "size" else n
    if name == "numel":
        return math.prod(shape)
    if name in _SAME:
        return base if isinstance(base, Mod) else tensor(shape)
    if name in {"transpose", "swapaxes"} and len(a) == 2:
        i, j = a[0] % n, a[1] % n
        shape[i], shape[j] = shape[j], shape[i]
        return tensor(shape)
    if name == "permute":
        return tensor([shape[d] for d in _dims(a)])
    if name in {"view", "reshape"}:
        new = _dims(a)
        if new.count(-1) == 1:
            known = math.prod(d for d in new if d != -1)
            new[new.index(-1)] = math.prod(shape) // known if known else 0
        if math.prod(new) != math.prod(shape):
            raise GiveUp("a view of a different size")
        return tensor(new)
    if name == "flatten":
        start = a[0] if a else kwargs.get("start_dim", 0)
        end = (a[1] if len(a) > 1 else kwargs.get("end_dim", -1)) % n
        start %= n
        return tensor([*shape[:start], math.prod(shape[start:end + 1]), *shape[end + 1:]])
    if name == "unsqueeze" and len(a) == 1:
        d = a[0] % (n + 1)
        return tensor([*shape[:d], 1, *shape[d:]])
    if name == "repeat":
        reps = _dims(a)
        return tensor([s * r for s, r in zip([1] * (len(reps) - n) + shape, reps, strict=True)])
    return Unknown(f"tensor method {name}")


def index(it: Interp, base: Any, sl: ast.expr, env: dict[str, Any], src: Source) -> Tensor:
    """`x[:, 1:, :]`, `x[:, 0, :]`, `x[:, None]`: the shape of a basic index."""
    shape = list(shape_of(base) or ())
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    out: list[int] = []
    dim = 0
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            out.append(1)
            continue
        if isinstance(item, ast.Constant) and item.value is Ellipsis:
            raise GiveUp("an ellipsis index")
        if dim >= len(shape):
            raise GiveUp("an index past the tensor's dimensions")
        if isinstance(item, ast.Slice):
            bounds = [it.concrete(it.eval(x, env, src)) if x is not None else None
                      for x in (item.lower, item.upper, item.step)]
            out.append(len(range(*slice(*bounds).indices(shape[dim]))))
        else:
            k = it.concrete(it.eval(item, env, src))
            if not isinstance(k, int):
                raise GiveUp("a tensor indexed by something other than a number")
        dim += 1
    return tensor([*out, *shape[dim:]])


def external(it: Interp, last: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`torch.cat`, `F.interpolate` over shaped tensors, an in-place initialiser (`trunc_normal_(x)`) that gives its
    tensor back; None when the call is not one of these."""
    if last == "cat" and args:
        parts = it.concrete_seq(args[0])
        shapes = [shape_of(p) for p in parts]
        if not parts or any(s is None for s in shapes):
            return None
        dim = it.concrete(kwargs.get("dim", args[1] if len(args) > 1 else 0)) % len(shapes[0])  # type: ignore[arg-type]
        first = list(shapes[0])  # type: ignore[arg-type]
        if any(len(s) != len(first) or [x for i, x in enumerate(s) if i != dim]  # type: ignore[arg-type]
               != [x for i, x in enumerate(first) if i != dim] for s in shapes):
            raise GiveUp("torch.cat of tensors whose shapes do not match")
        first[dim] = sum(s[dim] for s in shapes)  # type: ignore[index]
        return tensor(first)
    if last == "interpolate" and args and shape_of(args[0]) is not None and "size" in kwargs:
        size = it.concrete(kwargs["size"])
        shape = list(shape_of(args[0]))  # type: ignore[arg-type]
        size = list(size) if isinstance(size, (list, tuple)) else [size] * (len(shape) - 2)
        return tensor([*shape[:2], *size])
    if last.endswith("_") and not last.startswith("_") and args and shape_of(args[0]) is not None:
        return args[0]  # `nn.init.trunc_normal_(x, std=.02)`: initialised in place, returned
    return None
