"""From the submitted command to the launch: interpret the shell, pick the training launch among the programs
it would start, and hand that command to its launcher family."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

# the families register themselves on import
from schedmate.codeprof.launch import (  # noqa: F401
    accelerate,
    clis,
    deepspeed,
    mpi,
    python,
    slurm,
    torchrun,
    torchx,
    wrappers,
)
from schedmate.codeprof.launch.clis import CONVENTIONS
from schedmate.codeprof.launch.context import FAMILIES, Ctx
from schedmate.codeprof.launch.model import PYTHONS, Launch, LaunchError, combine
from schedmate.codeprof.launch.wrappers import PROJECT_RUNNERS, kaldi_inner
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.shell import Exec, interpret_command, readable

_DISTRIBUTED = {"torchrun", "deepspeed", "accelerate", "srun", "mpirun", "mpiexec", "horovodrun", "colossalai",
                "composer", "paddle.distributed.launch", "torchx"}
_TRAIN = re.compile(r"train|pretrain|finetune|fine_tune|sft|dpo|ppo|grpo|rlhf|run_clm|run_mlm|run_glue|run_qa"
                    r"|run_summ|run_transl|run_speech|run_image|learn|fit", re.IGNORECASE)
_NOT_TRAIN = re.compile(r"eval|test|infer|predict|preprocess|prepare|convert|download|export|merge|generat"
                        r"|sample|tokeniz|setup|install|plot|demo|serve|bench|debug|check|visuali|score"
                        r"|extract|build_|make_|pack|shard|split|collect_env", re.IGNORECASE)
_NOT_LAUNCH_MODULES = re.compile(r"^(pip|venv|ensurepip|torch\.utils\.collect_env|http\.server|json\.tool"
                                 r"|wandb|huggingface_hub|nltk\.downloader|spacy)(\.|$)")
_SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")


def _target(ex: Exec) -> tuple[str, bool] | None:
    """(the program's entry: script, module or CLI, is it a launch at all) for ranking."""
    argv = kaldi_inner(ex.argv) or ex.argv
    names = [PurePosixPath(t).name for t in argv]
    for k, t in enumerate(argv):
        name = names[k]
        if name in {"bash", "sh"} and k + 2 < len(argv) and argv[k + 1] == "-c":
            # `srun bash -c "$LAUNCHER $CMD"`: the launch is inside the string (followed by the bash family)
            inner = argv[k + 2].split()
            script = next((w for w in inner if w.endswith(".py")), None)
            if script or any(PurePosixPath(w).name in _DISTRIBUTED or PYTHONS.match(PurePosixPath(w).name)
                             for w in inner):
                return script or inner[0], True
        if t.endswith(".py"):
            return t, True
        if t in ("-m", "--module") and k + 1 < len(argv) and _after_launcher(argv[:k], names[:k]):
            # `torchrun --nproc-per-node 8 -m pkg.train cfg=...`: the launcher runs a module, not a script
            mod = argv[k + 1]
            return mod, not _NOT_LAUNCH_MODULES.match(mod)
        if PYTHONS.match(name):
            rest = argv[k + 1:]
            # the interpreter's own options come before the script: `python train.py -c cfg` is a script
            opts = rest[:next((j for j, t in enumerate(rest) if not t.startswith("-")), len(rest))]
            if "-c" in opts:
                return "-c", False
            if "-m" in opts:
                mod = rest[rest.index("-m") + 1] if rest.index("-m") + 1 < len(rest) else ""
                if mod.startswith(("torch.distributed", "accelerate", "deepspeed", "paddle.distributed")):
                    continue
                return mod, not _NOT_LAUNCH_MODULES.match(mod)
        if name in CONVENTIONS:
            sub = argv[k + 1] if k + 1 < len(argv) else ""
            return f"{name} {sub}", True
    return None


def _after_launcher(before: list[str], names: list[str]) -> bool:
    """Do these words start a distributed launcher (`torchrun`, `deepspeed`, `accelerate launch`,
    `python -m torch.distributed.run`) or a project runner (`uv run -m pkg.train`) whose own `-m` option
    follows?"""
    return any(n in _DISTRIBUTED for n in names) or any(
        t.startswith(("torch.distributed", "accelerate", "deepspeed")) for t in before) or any(
        n in PROJECT_RUNNERS and names[j + 1:j + 2] == ["run"] for j, n in enumerate(names))


def _rank(ex: Exec, wd: Workdir) -> tuple[int, ...] | None:
    got = _target(ex)
    argv = kaldi_inner(ex.argv) or ex.argv
    if got is None and argv:
        from schedmate.codeprof.launch.clis import console_script

        prog = PurePosixPath(argv[0]).name
        if console_script(Ctx(wd, Launch()), prog) is not None:  # a console script of the job's own package
            got = (prog, True)
    if got is None:
        return None
    target, is_launch = got
    if not is_launch:
        return None
    names = {PurePosixPath(t).name for t in ex.argv}
    dist = bool(names & _DISTRIBUTED) or any(t.startswith("torch.distributed") for t in ex.argv)
    stem = PurePosixPath(target).name
    train = bool(_TRAIN.search(stem)) and not _NOT_TRAIN.search(stem)
    skip = bool(_NOT_TRAIN.search(stem)) and not _TRAIN.search(stem)
    exists = target.endswith(".py") and wd.exists(wd.rel(target, ex.cwd) or "")
    return (int(not skip), int(train or dist), int(dist), int(not ex.conditional), int(exists))


def choose(execs: list[Exec], wd: Workdir) -> tuple[Exec | None, list[str]]:
    """The training launch among the programs a command starts, and notes on the choice."""
    ranked = [(r, -k, ex) for k, ex in enumerate(execs) if (r := _rank(ex, wd)) is not None]
    if not ranked:
        if any(_target(ex) == ("-c", False) for ex in execs):
            raise LaunchError("`python -c` runs inline code; the analyzer needs an entry script")
        missing = [ex for ex in execs if PurePosixPath(ex.argv[0]).name in {"bash", "sh"} or
                   ex.argv[0].endswith(_SCRIPT_SUFFIXES)]
        if missing:
            ex = missing[0]
            target = next((t for t in ex.argv[1:] if not t.startswith("-")), ex.argv[0]) \
                if PurePosixPath(ex.argv[0]).name in {"bash", "sh"} else ex.argv[0]
            raise LaunchError(f"wrapper script {readable(target)} is not readable inside the workdir (missing or "
                              f"outside it)")
        return None, []
    best = max(ranked, key=lambda t: (t[0], t[1]))
    notes: list[str] = []
    rivals = [ex for r, _, ex in ranked if r == best[0] and ex.argv != best[2].argv]
    if rivals and best[2].background and all(
            ex.background and ex.argv[:2] == best[2].argv[:2] and len(ex.argv) == len(best[2].argv) for ex in rivals):
        # the same program started N times side by side (`python train.py --rank 0 & ... --rank 7 & wait`):
        # one job of N processes
        best[2].parallel = len(rivals) + 1
        notes.append(f"{len(rivals) + 1} copies of the launch run side by side (started with &): one process each")
    elif rivals:
        notes.append(f"{len(rivals) + 1} launch commands qualify; read the first, at {best[2].where}")
    if best[2].conditional:
        notes.append(f"the launch at {best[2].where} runs only under a condition the sources do not decide")
    return best[2], notes


def follow(ctx: Ctx, command: str, script: bool = False) -> bool:
    """Interpret `command` (shell) from the launch's current directory and dispatch its training launch."""
    L = ctx.launch
    run = interpret_command(command, ctx.wd, L.env, cwd=L.base)
    L.notes.extend(n for n in run.notes if n not in L.notes)
    L.files.extend(f for f in run.files if f not in L.files)
    main, notes = choose(run.execs, ctx.wd)
    L.notes.extend(notes)
    if main is None:
        invalid = [n for n in run.notes if "not valid shell" in n]
        if invalid and not script:
            raise LaunchError(invalid[0])
        if run.files:
            L.notes.append(f"{run.files[-1]}: no launch line found")
        return False
    for s in main.scripts:
        L.chain.append(f"sh:{s}")
    if main.sbatch:
        L.chain.append("sbatch")
        slurm.slurm_options(L, main.sbatch)
        combine(L)
    L.base = main.cwd
    L.env.update(main.env)
    ctx.where = [main.where, *main.evidence]
    alloc_nodes = L.get("num_nodes")  # the allocation's, before a step's own `-N 1`
    done = ctx.dispatch(main.argv)
    if slurm.steps_are_nodes(main.argv, main.parallel, alloc_nodes, L):
        # one srun step per node, started side by side: the copies are the job's nodes
        L.put("num_nodes", main.parallel, [main.where])
        L.settings.pop("num_procs", None)
        L.notes[:] = [n for n in L.notes if "copies of the launch run side by side" not in n]
        L.notes.append(f"{main.parallel} srun steps of one node each run side by side: {main.parallel} nodes")
        combine(L)
    elif main.parallel > 1 and L.get("single_process"):
        L.settings.pop("single_process", None)
        L.put("procs_per_node", main.parallel, [main.where])
        L.put("distributed_launcher", True, [main.where])
        combine(L)
    return done


def parse_launch(command: str, wd: Workdir, env: dict[str, str] | None = None) -> Launch:
    """Parse `command` as run from the workdir root. Raises LaunchError with a clear message."""
    L = Launch(env=dict(env or {}))
    follow(Ctx(wd, L), command)
    combine(L)
    return L


__all__ = ["FAMILIES", "choose", "follow", "parse_launch"]
