"""A job's own class that only specialises one of torch's layers: `class SynchronizedBatchNorm2d(_BatchNorm)` (the
synchronised batch norm many segmentation and detection repositories vendor), `class Conv2dSame(nn.Conv2d)`. Its
parameters are the layer's, sized by the same constructor arguments, provided its own code adds none: no
`nn.Parameter`, no `nn.<layer>` call and no local module class built in its `__init__` (a subclass that adds
weights stays uncounted, so the whole model stays null).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

from schedmate.codeprof.static.modelsize.layers import LEAF_COUNTS, GiveUp, Mod, build_nn
from schedmate.codeprof.static.modelsize.values import ClassRef, Ext

if TYPE_CHECKING:
    from schedmate.codeprof.static.modelsize.interp import Interp

# torch's private bases stand for the public layer of the same size (any dimension: the same parameters)
_PRIVATE = {"_BatchNorm": "BatchNorm2d", "_NormBase": "BatchNorm2d", "_InstanceNorm": "InstanceNorm2d",
            "_ConvNd": None}
_TORCH_NN = re.compile(r"^(torch\.)?nn(\.modules(\.\w+)?)?\.")


def _torch_layer(ext: Ext) -> str | None:
    """The layer an external base names (`torch.nn.modules.batchnorm._BatchNorm` -> BatchNorm2d), or None."""
    if not _TORCH_NN.match(ext.path):
        return None
    last = ext.path.rsplit(".", 1)[-1]
    name = _PRIVATE.get(last, last)
    return name if name in LEAF_COUNTS else None


def _adds_weights(it: Interp, cls: ClassRef) -> bool:
    """Whether the class's `__init__` may create parameters or modules of its own: an `nn.`/`torch.nn.` call, a
    `Parameter`, or a call of a local module class (a plain helper object such as a sync master adds none)."""
    for st in cls.node.body:
        if not (isinstance(st, ast.FunctionDef) and st.name == "__init__"):
            continue
        for n in ast.walk(st):
            if not isinstance(n, ast.Call):
                continue
            text = ast.unparse(n.func)
            if text.rsplit(".", 1)[-1] == "Parameter" or re.match(r"^(torch\.)?nn\.", text):
                return True
            if "." not in text and text != "super":
                try:
                    got = it.eval(n.func, {}, cls.src)
                except GiveUp:
                    return True
                if isinstance(got, ClassRef) and it.is_module_class(got):
                    return True
    return False


def layer_subclass(it: Interp, cls: ClassRef, args: list[Any], kwargs: dict[str, Any]) -> Mod | None:
    """The layer a local subclass of a torch layer amounts to, or None when the class is not one."""
    chain = it.mro(cls)
    layer = None
    for c in chain:
        for b in c.node.bases:
            try:
                got = it.eval(b, {}, c.src)
            except GiveUp:
                return None
            if isinstance(got, Ext):
                layer = layer or _torch_layer(got)
    if layer is None:
        return None
    if any(_adds_weights(it, c) for c in chain):
        raise GiveUp(f"{cls.node.name} subclasses nn.{layer} and adds weights of its own")
    return build_nn(layer, [it.concrete(a) for a in args], {k: it.concrete(v) for k, v in kwargs.items()})
