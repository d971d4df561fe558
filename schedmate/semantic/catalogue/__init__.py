"""The job-template catalogue: launch command, training script and configs per template, written by us
in the styles of real frameworks (no code copied from public projects), parameterised by model size,
batch, steps, parallelism and GPUs/nodes.

A `Template` says which workload class of `schedmate.workloads` it is (so `Job.spread_slowdown`
agrees with the code), which job kinds it serves (`pretrain`, `sft`, `mllm`, `eval`, `debug`,
`train`), which GPU counts it can run on, its log style (`schedmate.semantic.logs`) and its nominal
iteration time. `render(params)` returns the workdir files (path -> text), `command.txt` included.
Scripts are compact, never executed, and carry no instructions to any reader.

One module per framework family (`megatron`, `torchtitan`, `nanogpt`, `deepspeed`, `hf`, `lightning`, `timm`,
`mmengine`, `fairseq`, `plain`) holds its script texts and the `render` factory that fills them; `base` holds
`Params`, `Template` and the shared helpers; `templates` lists every template and answers look-ups.
"""

from schedmate.semantic.catalogue.base import KINDS, Params, Template, layout
from schedmate.semantic.catalogue.templates import (
    CATCH_ALL,
    CPU_TEMPLATE,
    TEMPLATES,
    default_params,
    templates_for,
)

__all__ = [
    "CATCH_ALL",
    "CPU_TEMPLATE",
    "KINDS",
    "TEMPLATES",
    "Params",
    "Template",
    "default_params",
    "layout",
    "templates_for",
]
