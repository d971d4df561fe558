"""`python [-u] script.py args`, `python -m module args` and a bare `script.py`: the entry point."""

from __future__ import annotations

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import LaunchError


@family("python", "<script.py>")
def python(ctx: Ctx, toks: list[str]) -> bool:
    if toks[0].endswith(".py"):
        ctx.launch.chain.append("python")
        return entry(ctx, toks[0], toks[1:])
    i = 1
    module = None
    while i < len(toks) and toks[i].startswith("-"):
        t = toks[i]
        if t == "-c":
            raise LaunchError("`python -c` runs inline code; the analyzer needs an entry script")
        if t in {"-m", "-X", "-W"}:
            if t == "-m":
                module = toks[i + 1] if i + 1 < len(toks) else ""
                i += 2
                break
            i += 2
        elif t.startswith("-m") and len(t) > 2:
            module = t[2:]
            i += 1
            break
        else:
            i += 1
    if module is not None:
        # OneFlow's launcher takes torch.distributed.launch's options (--nproc_per_node, --nnodes, ...)
        if module in {"torch.distributed.run", "torch.distributed.launch", "oneflow.distributed.launch"}:
            from schedmate.codeprof.launch.torchrun import torchrun

            ctx.launch.chain.append(f"python -m {module}")
            return torchrun(ctx, toks, i, legacy=module.endswith("launch"))
        if module in {"accelerate.commands.launch"}:
            from schedmate.codeprof.launch.accelerate import accelerate

            ctx.launch.chain.append("accelerate")
            return accelerate(ctx, ["accelerate", "launch", *toks[i:]])
        if module in {"deepspeed.launcher.runner"}:
            return ctx.dispatch(["deepspeed", *toks[i:]])
        if module in {"paddle.distributed.launch", "paddle.distributed.fleet.launch"}:
            from schedmate.codeprof.launch.paddle import paddle_launch

            ctx.launch.chain.append(f"python -m {module}")
            return paddle_launch(ctx, toks, i)
        ctx.launch.chain.append("python")
        return entry(ctx, None, toks[i:], module=module)
    if i >= len(toks):
        return False
    ctx.launch.chain.append("python")
    return entry(ctx, toks[i], toks[i + 1 :])


def entry(ctx: Ctx, script: str | None, args: list[str], module: str | None = None) -> bool:
    """The program the launchers start: a workdir script or module, with its arguments."""
    L = ctx.launch
    if script is not None and _stray_interpreter(ctx, script):
        # `torchrun --nproc_per_node 8 python train.py` (as some READMEs write it): the launcher already runs
        # the interpreter, so the token is not the entry script; read past it and its own options
        L.notes.append(f"launcher followed by a stray `{script}`: its script is the entry point")
        script, args, module = _after_interpreter(args)
        if script is None and module is None:
            return False
    if module is not None:
        L.module = module
        cand = module.replace(".", "/")
        for p in (f"{cand}.py", f"{cand}/__main__.py"):
            # the package at the root, or under `src/` (the src layout setuptools, hatch, flit and uv find by
            # default): an installed console script or `python -m pkg.mod` runs that file
            for base in (L.base, "", "src"):
                r = ctx.wd.rel(p, base)
                if r and ctx.wd.exists(r):
                    L.script = r
                    if base == "src":
                        L.notes.append(f"module {module}: {r} (src layout)")
                    break
            if L.script:
                break
        if L.script is None and "." in module and ctx.wd.exists("__init__.py"):
            # the repository root is itself the package (`python -m albert.run_classifier` from its parent)
            inner = module.split(".", 1)[1].replace(".", "/")
            for p in (f"{inner}.py", f"{inner}/__main__.py"):
                if ctx.wd.exists(p):
                    L.script = p
                    L.notes.append(f"module {module}: {p} (the repository root is the package)")
                    break
        if L.script is None and (mapped := _package_dir_module(ctx, module)) is not None:
            L.script = mapped
            L.notes.append(f"module {module}: {mapped} (package_dir of the repository's setup.py)")
    elif script is not None:
        L.script = ctx.wd.rel(script, L.base)
        if L.script is None:
            L.notes.append(f"entry script {script} is outside the workdir; not read")
    L.args = list(args)
    L.args_where = list(ctx.where)
    if not L.get("distributed_launcher") and not any(
        k in L.settings or k in L.unknown for k in ("num_nodes", "num_procs", "procs_per_node")
    ):
        # a bare interpreter: one process on one node
        L.put("num_nodes", 1, ctx.where, override=False)
        L.put("procs_per_node", 1, ctx.where, override=False)
        L.put("single_process", True, ctx.where, override=False)
    return True


def _stray_interpreter(ctx: Ctx, script: str) -> bool:
    from pathlib import PurePosixPath

    from schedmate.codeprof.launch.model import PYTHONS

    if not PYTHONS.match(PurePosixPath(script).name):
        return False
    rel = ctx.wd.rel(script, ctx.launch.base)
    return not (rel and ctx.wd.exists(rel))


def _after_interpreter(args: list[str]) -> tuple[str | None, list[str], str | None]:
    """The script (or `-m` module) and its arguments after an interpreter's own options."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        t = args[i]
        if t == "-m":
            return None, args[i + 2 :], (args[i + 1] if i + 1 < len(args) else None)
        if t.startswith("-m") and len(t) > 2:
            return None, args[i + 1 :], t[2:]
        if t == "-c":
            raise LaunchError("`python -c` runs inline code; the analyzer needs an entry script")
        i += 2 if t in {"-X", "-W"} else 1
    if i >= len(args):
        return None, [], None
    return args[i], args[i + 1 :], None


def _package_dir_module(ctx: Ctx, module: str) -> str | None:
    """A module the repository installs from another directory (`package_dir={"yolox.tools": "tools"}` in
    setup.py or setup.cfg's `[options.package_dir]`): the file `python -m module` runs."""
    import re

    text = (ctx.wd.read_text("setup.py") or "") + "\n" + (ctx.wd.read_text("setup.cfg") or "")
    pairs = re.findall(r"""['"]?([A-Za-z_][\w.]*)['"]?\s*[:=]\s*['"]?([\w./-]+)['"]?""", text)
    for pkg, directory in sorted(pairs, key=lambda p: -len(p[0])):
        if module == pkg or module.startswith(pkg + "."):
            rest = module[len(pkg):].lstrip(".").replace(".", "/")
            for cand in ((f"{directory}/{rest}.py", f"{directory}/{rest}/__main__.py") if rest
                         else (f"{directory}/__main__.py",)):
                rel = ctx.wd.rel(cand)
                if rel and ctx.wd.exists(rel):
                    return rel
    return None
