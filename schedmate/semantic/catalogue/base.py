"""What a template is (`Template`), what varies between two jobs of one (`Params`), and the helpers every
family uses: placeholder filling, node layout, GPU-count predicates, the torchrun prefix."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

KINDS = ("pretrain", "sft", "mllm", "eval", "debug", "train")


@dataclass(frozen=True)
class Params:
    """What varies between two jobs of one template."""

    num_gpus: int
    nodes: int = 1
    gpus_per_node: int = 1
    steps: int = 1000
    """Configured optimizer steps (for per-epoch templates: epochs x steps_per_epoch)."""
    epochs: int | None = None
    """Per-epoch templates only: configured epochs."""
    steps_per_epoch: int | None = None
    micro_batch: int = 8
    grad_accum: int = 1
    lr: float = 3e-4
    seq_len: int = 1024
    tp: int = 1
    pp: int = 1
    log_every: int = 10
    eval_every: int = 0
    """Steps between evaluations (0: none)."""
    ckpt_every: int = 0
    seed: int = 0
    variant: int = 0
    """0 for a first submission, k for the user's k-th edit of it."""
    arch: str = "resnet50"
    """Catch-all template only: the torchvision model named on its command line."""

    @property
    def dp(self) -> int:
        return max(1, self.num_gpus // max(1, self.tp * self.pp))

    @property
    def global_batch(self) -> int:
        return self.micro_batch * self.grad_accum * self.dp


@dataclass(frozen=True)
class Template:
    name: str
    workload: str | None
    """Catalogue class of `schedmate.workloads`; None for the catch-all (takes the job's class) and the
    CPU-only template (nothing to spread)."""
    kinds: frozenset[str]
    style: str
    """Log style written by `schedmate.semantic.logs` (hf, lightning, megatron, deepspeed, mmengine,
    fairseq, timm, nanogpt, torchtitan, custom)."""
    framework: str
    model: str
    family: str
    params_b: float
    """Model size in billions of parameters (documentation)."""
    iter_s: float
    """Nominal seconds per optimizer step on a consolidated placement (before fitting to the runtime)."""
    render: Callable[[Params], dict[str, str]]
    fits: Callable[[int], bool]
    per_epoch: bool = False
    log_every: int = 10
    micro_batch: int = 8
    seq_len: int = 1024
    tp: int = 1
    pp: int = 1
    lr: float = 3e-4
    steps_per_epoch: int = 500
    """Per-epoch templates: steps per epoch on 8 GPUs (scaled by 8 / GPUs, the dataset is fixed)."""

    def expected(self, p: Params) -> dict[str, int | None]:
        """What the code analyzer's static pass should read from a rendered workdir."""
        return {
            "num_gpus": p.num_gpus,
            "num_nodes": p.nodes if p.num_gpus == 0 or layout(p.num_gpus) is not None else None,
            "train_steps": None if self.per_epoch else p.steps,
            "epochs": p.epochs if self.per_epoch else None,
        }


def _sub(text: str, **kw: object) -> str:
    for k, v in kw.items():
        text = text.replace(f"<<{k}>>", str(v))
    if "<<" in text and ">>" in text.split("<<", 1)[1]:
        raise ValueError(f"unfilled placeholder in template text: {text.split('<<', 1)[1][:40]!r}")
    return text


def layout(gpus: int, max_per_node: int = 8) -> tuple[int, int] | None:
    """(nodes, GPUs per node) for `gpus` GPUs with equal nodes, or None (e.g. 11 GPUs)."""
    if gpus <= max_per_node:
        return 1, max(gpus, 1)
    for per in range(max_per_node, 1, -1):
        if gpus % per == 0:
            return gpus // per, per
    return None


def _any(g: int) -> bool:
    return g >= 1 and layout(g) is not None


def _one(g: int) -> bool:
    return g == 1


def _node_multiple(mult: int, lo: int = 1) -> Callable[[int], bool]:
    """GPU counts `lo..8` divisible by `mult`, or whole 8-GPU nodes divisible by `mult`."""
    def fits(g: int) -> bool:
        if g < lo or g % mult:
            return False
        return g <= 8 or g % 8 == 0
    return fits


def _between(lo: int, hi: int) -> Callable[[int], bool]:
    return lambda g: lo <= g <= hi and layout(g) is not None


def torchrun(p: Params, script: str, single: str = "python") -> str:
    """The launch prefix: plain python on one GPU, torchrun on one node, multi-node torchrun beyond."""
    if p.num_gpus == 1:
        return f"{single} {script}"
    if p.nodes == 1:
        return f"torchrun --standalone --nproc_per_node={p.num_gpus} {script}"
    return (f"torchrun --nnodes {p.nodes} --nproc_per_node {p.gpus_per_node} --rdzv_backend c10d "
            f"--rdzv_endpoint $MASTER_ADDR:29500 {script}")


def _hostfile(p: Params) -> str:
    return "".join(f"worker-{i} slots={p.gpus_per_node}\n" for i in range(p.nodes))
