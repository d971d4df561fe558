"""Whether a JAX job computes on one device: the names its own code uses, not its comments, docstrings or the
JAX libraries' own sources.

A JAX program that only `jit`s its step runs on the default device; it spreads over several only through a
multi-device API (`pmap`, `pjit`, `shard_map`, a mesh, a sharding, `jax.devices()`, `local_device_count`).
Those names count only where they are code: a comment ("to use more than one accelerator, use jax.pmap") or a
docstring ("to replicate the formula of the paper") says nothing about the run, and neither do the sources of
JAX itself or of its libraries when the analyzer read them (a job inside the JAX repository reads `jax/_src/`).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

JAX_LIBRARY_PACKAGES = frozenset({"jax", "jaxlib", "flax", "optax", "haiku", "chex", "equinox", "objax", "orbax"})
"""top-level packages that are JAX or its common libraries: their sources define the multi-device APIs"""

OTHER_TRAINING_FRAMEWORKS = frozenset({"torch", "pytorch_lightning", "lightning", "accelerate", "deepspeed"})
"""a job importing one of these may train with it: its devices are not the JAX program's (TensorFlow is often
only a JAX job's data pipeline, `tf.data`; a job that trains with it is told by the detected framework)"""


def code_names(text: str) -> set[str]:
    """The identifiers a Python text uses as code (comments and strings left out). Text that does not
    tokenize falls back to the text with `#` comments and quoted strings removed."""
    names: set[str] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME:
                names.add(tok.string)
        return names
    except (tokenize.TokenError, IndentationError, SyntaxError):
        stripped = re.sub(r'""".*?"""|\'\'\'.*?\'\'\'', " ", text, flags=re.DOTALL)
        stripped = re.sub(r"#[^\n]*|\"[^\"\n]*\"|'[^'\n]*'", " ", stripped)
        return set(re.findall(r"[A-Za-z_]\w*", stripped))


def is_jax_library_file(rel: str) -> bool:
    """A file of JAX or one of its libraries (`jax/_src/api.py`, `flax/linen/module.py`), not the job's."""
    return rel.replace("\\", "/").split("/", 1)[0] in JAX_LIBRARY_PACKAGES


def job_files(rels: Iterable[str]) -> list[str]:
    """The files read that belong to the job, not to JAX or its libraries."""
    return [rel for rel in rels if not is_jax_library_file(rel)]


def names_multi_device(texts: Iterable[str], multi: Iterable[str]) -> bool:
    """Whether any text uses one of the multi-device names as code."""
    wanted = set(multi)
    return any(code_names(t) & wanted for t in texts)


def imports_other_framework(imports_by_file: dict[str, list[str]]) -> bool:
    """Whether a job file imports a PyTorch-family training framework (JAX library files left out)."""
    return any(imp.split(".")[0] in OTHER_TRAINING_FRAMEWORKS
               for rel, imps in imports_by_file.items() if not is_jax_library_file(rel) for imp in imps)
