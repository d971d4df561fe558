"""Training frameworks' own command-line entry points (`llamafactory-cli train x.yaml`, `composer -n 8 ...`,
`tune run`, `fairseq-train`, `yolo train`, `mim train`, `colossalai run`): how each starts its processes.

These are conventions of public frameworks (what their launchers do), kept as data: the entry point's
name, the subcommands that train, the options or environment variables that give processes per node
and nodes, and what happens when none is given (one process, or one per visible GPU: unknown here).
An unlisted program is taken as an entry point of unknown process count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import scan_options, to_int
from schedmate.codeprof.launch.python import entry


@dataclass(frozen=True)
class Convention:
    train_subcommands: tuple[str, ...] = ()
    """words after the program that name the training command (kept as the module name)"""
    nproc_options: tuple[str, ...] = ()
    nodes_options: tuple[str, ...] = ()
    nproc_env: tuple[str, ...] = ()
    nodes_env: tuple[str, ...] = ()
    default: str = "all-gpus"
    """`single`: one process unless told; `all-gpus`: one per visible GPU (unknown here)"""
    script_after_options: bool = False
    """the launcher takes a Python script after its own options (composer, colossalai)"""
    devices_option: str | None = None
    """a `key=value` or option whose value lists or counts the GPUs (`device=0,1,2,3`)"""
    recipe_paths: tuple[str, ...] = ()
    """where the first positional argument (a recipe name) is a script: `recipes/{}.py` for `tune run`"""
    gpu: bool = True
    """the entry point trains on GPUs (a process is a GPU)"""


CONVENTIONS: dict[str, Convention] = {
    "llamafactory-cli": Convention(("train", "sft", "pt", "dpo", "rm", "ppo", "kto"), nproc_env=("NPROC_PER_NODE",),
                                   nodes_env=("NNODES",)),
    "lmf": Convention(("train",), nproc_env=("NPROC_PER_NODE",), nodes_env=("NNODES",)),
    "axolotl": Convention(("train", "preprocess"), ("num_processes",), ("num_machines",)),
    "composer": Convention((), ("n", "nproc"), ("world_size",), script_after_options=True),
    "colossalai": Convention(("run",), ("nproc_per_node",), ("nnodes",), script_after_options=True),
    "tune": Convention(("run",), ("nproc_per_node",), ("nnodes",), default="single",
                       recipe_paths=("recipes/{}.py", "{}.py")),
    "fairseq-train": Convention((), ("distributed_world_size",)),
    "fairseq-hydra-train": Convention((), ("distributed_training.distributed_world_size",)),
    "litgpt": Convention(("pretrain", "finetune", "finetune_full", "finetune_lora", "finetune_adapter"),
                         ("devices",), ("num_nodes",)),
    "yolo": Convention(("train",), default="single", devices_option="device"),
    "mim": Convention(("train",), ("gpus",), ("nodes",), default="single"),
    "swift": Convention(("sft", "pt", "rlhf"), nproc_env=("NPROC_PER_NODE",), nodes_env=("NNODES",)),
    "accelerate-launch": Convention(),
}


@family("bash", "sh", "zsh", "dash")
def shell(ctx: Ctx, toks: list[str]) -> bool:
    """`bash -c "..."` (the string is a script) or a script the interpreter could not find."""
    if "-c" in toks:
        k = toks.index("-c")
        if k + 1 < len(toks):
            from schedmate.codeprof.launch.dispatch import follow

            return follow(ctx, toks[k + 1], script=False)
        return False
    target = next((t for t in toks[1:] if not t.startswith("-")), None)
    if target:
        ctx.launch.notes.append(f"script {target} is not readable in the workdir; not followed")
    return False


def console_script(ctx: Ctx, prog: str) -> str | None:
    """`pkg.module` of a console script the job's own package declares (pyproject `[project.scripts]`,
    setup.py / setup.cfg `console_scripts`), so `nnUNetv2_train ...` is read like `python -m pkg.module ...`."""
    import re as _re
    import tomllib

    wd = ctx.wd
    text = wd.read_text("pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        target = (data.get("project", {}).get("scripts", {}) or {}).get(prog) or \
            (data.get("tool", {}).get("poetry", {}).get("scripts", {}) or {}).get(prog)
        if isinstance(target, str) and ":" in target:
            return target.split(":", 1)[0].strip()
    for name in ("setup.py", "setup.cfg"):
        text = wd.read_text(name) or ""
        m = _re.search(rf"""['"]?{_re.escape(prog)}\s*=\s*([\w.]+):\w+""", text)
        if m:
            return m.group(1)
    from schedmate.codeprof.launch.script_wrappers import wrapped_module

    return wrapped_module(wd, prog)  # an installed script that only calls into one module


def framework_cli(ctx: Ctx, toks: list[str]) -> bool:
    L = ctx.launch
    prog = PurePosixPath(toks[0]).name
    conv = CONVENTIONS.get(prog)
    if conv is None and (module := console_script(ctx, prog)) is not None:
        L.chain.append(prog)
        L.notes.append(f"{prog}: console script of this repository -> {module}")
        return entry(ctx, None, toks[1:], module=module)
    if conv is None:
        L.chain.append(prog)
        L.notes.append(f"{prog}: an entry point schedmate has no conventions for; its process count is unknown")
        L.unknown.setdefault("num_procs", [f"{prog} (unknown launcher)"])
        return entry(ctx, None, toks[1:], module=prog)
    L.chain.append(prog)
    rest = toks[1:]
    module = prog
    k = next((j for j, t in enumerate(rest[:2]) if t in conv.train_subcommands), None)
    if k is not None:  # `yolo train ...`, `yolo detect train ...` (a task word before the mode)
        module = f"{prog} {rest[k]}"
        rest = rest[:k] + rest[k + 1:]
    valued = {o.replace("-", "_") for o in conv.nproc_options + conv.nodes_options}
    opts, i = scan_options(rest, 0, valued, set()) if conv.script_after_options else ({}, 0)
    if not conv.script_after_options:
        # options may come anywhere among the arguments: look for the process options only
        for k, tok in enumerate(rest):
            name, eq, val = tok.lstrip("-").partition("=")
            name = name.replace("-", "_")
            if tok.startswith("-") and name in valued:
                opts[name] = val if eq else (rest[k + 1] if k + 1 < len(rest) else "")
    nproc = next((opts[o] for o in conv.nproc_options if isinstance(opts.get(o), str)), None)
    nodes = next((opts[o.replace("-", "_")] for o in conv.nodes_options if isinstance(opts.get(o.replace("-", "_")), str)), None)
    env_nproc = next((L.env[e] for e in conv.nproc_env if L.env.get(e)), None)
    env_nodes = next((L.env[e] for e in conv.nodes_env if L.env.get(e)), None)
    nproc = nproc if nproc is not None else env_nproc
    nodes = nodes if nodes is not None else env_nodes
    if conv.devices_option:
        for tok in rest:
            key, eq, val = tok.lstrip("-").partition("=")
            if eq and key == conv.devices_option:
                ids = [d for d in val.replace(" ", "").split(",") if d]
                if ids and all(d.isdigit() for d in ids):
                    nproc = str(len(ids)) if len(ids) > 1 else "1"
    if nproc is not None:
        L.put("procs_per_node", to_int(nproc), ctx.where, raw=nproc)
        L.put("distributed_launcher", True, ctx.where)
    elif conv.default == "single":
        L.put("procs_per_node", 1, ctx.where, override=False)
    else:
        cvd = L.env.get("CUDA_VISIBLE_DEVICES")
        ids = [d for d in (cvd or "").split(",") if d.strip()]
        if ids and all(d.strip().isdigit() for d in ids):
            L.put("procs_per_node", len(ids), ["env:CUDA_VISIBLE_DEVICES"])
        else:
            L.unknown.setdefault("procs_per_node", [f"{prog} starts one process per visible GPU"])
        L.put("distributed_launcher", True, ctx.where)
    if nodes is not None:
        L.put("num_nodes", to_int(nodes), ctx.where, raw=nodes)
    else:
        L.put("num_nodes", 1, ctx.where, override=False)
    if conv.gpu:
        L.put("gpu_framework", prog, ctx.where, override=False)
    if conv.script_after_options and i < len(rest) and rest[i].endswith(".py"):
        return entry(ctx, rest[i], rest[i + 1 :])
    for k, tok in enumerate(rest if conv.recipe_paths else ()):
        # the recipe: the first bare word that names a script of the repository (option values never do)
        if tok.startswith("-") or "=" in tok or not tok.replace("/", "").replace(".", "").replace("_", "").isalnum():
            continue
        for pattern in conv.recipe_paths:
            rel = ctx.wd.rel(pattern.format(tok), L.base)
            if rel and ctx.wd.exists(rel):
                L.notes.append(f"{module} {tok}: recipe {rel}")
                return entry(ctx, pattern.format(tok), rest[:k] + rest[k + 1:])
    return entry(ctx, None, rest[i:] if conv.script_after_options else rest, module=module)
