"""Programs that only wrap the launch: nohup, time, env, numactl, taskset, timeout, containers."""

from __future__ import annotations

import re

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import scan_options

_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")


@family("nohup", "time", "exec", "stdbuf", "nice", "ionice", "unbuffer", "xvfb-run", "chrt")
def plain(ctx: Ctx, toks: list[str]) -> bool:
    _, i = scan_options(toks, 1, set(), set())
    return ctx.dispatch(toks[i:]) if i < len(toks) else False


@family("env")
def env(ctx: Ctx, toks: list[str]) -> bool:
    i = 1
    while i < len(toks) and (toks[i].startswith("-") or _ASSIGN.match(toks[i])):
        if _ASSIGN.match(toks[i]):
            k, _, v = toks[i].partition("=")
            ctx.launch.env[k] = v
        i += 1
    return ctx.dispatch(toks[i:]) if i < len(toks) else False


@family("numactl", "taskset", "timeout")
def valued(ctx: Ctx, toks: list[str]) -> bool:
    i = 1
    while i < len(toks) and toks[i].startswith("-"):
        i += 1 if "=" in toks[i] else 2
    if toks[0].endswith(("taskset", "timeout")) and i < len(toks):
        i += 1  # the cpu mask / the duration
    return ctx.dispatch(toks[i:]) if i < len(toks) else False


@family("singularity", "apptainer")
def container(ctx: Ctx, toks: list[str]) -> bool:
    # `singularity exec [opts] image.sif cmd ...`
    if len(toks) < 3 or toks[1] not in ("exec", "run"):
        return False
    opts, i = scan_options(toks, 2, {"B", "bind", "H", "home", "pwd", "W", "workdir", "env", "overlay"},
                           {"nv", "nvccli", "cleanenv", "c", "contain", "e", "writable-tmpfs", "writable_tmpfs"})
    return ctx.dispatch(toks[i + 1 :]) if i + 1 < len(toks) else False


# Kaldi's job runners (also ESPnet, icefall and other Kaldi-style recipes): `run.pl [--gpu 1] [JOB=1:N] LOG cmd...`
KALDI_RUNNERS = {"run.pl", "queue.pl", "slurm.pl", "ssh.pl", "retry.pl"}


def kaldi_inner(argv: list[str]) -> list[str] | None:
    """The command a Kaldi job runner runs (its options, the job range and the log file dropped), or None."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in KALDI_RUNNERS:
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 1 if "=" in argv[i] else 2
    if i < len(argv) and re.fullmatch(r"[A-Za-z_]\w*=\d+:\d+", argv[i]):
        i += 1  # JOB=1:8
    return argv[i + 1:] if i + 1 < len(argv) else None


@family(*sorted(KALDI_RUNNERS))
def kaldi_runner(ctx: Ctx, toks: list[str]) -> bool:
    inner = kaldi_inner(toks)
    return ctx.dispatch(inner) if inner else False


# Project and environment runners: `uv run`, `poetry run`, `pipenv run`, `pdm run`, `rye run`, `pixi run`,
# `hatch run [env:]cmd`, `conda|mamba|micromamba run -n env`. Each runs the rest of the line in the project's
# environment, unchanged; their own options (value-taking ones listed, the rest flags) come first.
_RUNNER_VALUED = {
    "uv": {"with", "with_editable", "with_requirements", "python", "p", "project", "directory", "package", "extra",
           "group", "only_group", "no_group", "env_file", "index", "index_url", "extra_index_url", "find_links", "f",
           "config_file", "cache_dir", "script", "s"},
    "poetry": {"C", "directory", "P", "project"},
    "pdm": {"p", "project", "venv"},
    "pixi": {"e", "environment", "manifest_path"},
    "conda": {"n", "name", "p", "prefix", "cwd"},
}
_RUNNER_VALUED["mamba"] = _RUNNER_VALUED["micromamba"] = _RUNNER_VALUED["conda"]


PROJECT_RUNNERS = ("uv", "poetry", "pipenv", "pdm", "rye", "pixi", "hatch", "conda", "mamba", "micromamba")


@family(*PROJECT_RUNNERS)
def project_runner(ctx: Ctx, toks: list[str]) -> bool:
    if len(toks) < 3 or toks[1] != "run":
        return False
    prog = toks[0].rsplit("/", 1)[-1]
    valued = _RUNNER_VALUED.get(prog, set())
    i = 2
    while i < len(toks) and toks[i].startswith("-") and toks[i] not in ("-m", "--module", "--"):
        name, eq, _ = toks[i].lstrip("-").partition("=")
        i += 2 if not eq and name.replace("-", "_") in valued else 1
    if i < len(toks) and toks[i] == "--":
        i += 1
    rest = toks[i:]
    if rest and rest[0] in ("-m", "--module"):  # `uv run -m pkg.train`: the project's python runs the module
        rest = ["python", "-m", *rest[1:]]
    if prog == "hatch" and rest and ":" in rest[0] and not rest[0].startswith(("/", ".")):
        rest = [rest[0].split(":", 1)[1], *rest[1:]]  # `hatch run train:python x.py` names the environment
    return ctx.dispatch(rest) if rest else False


_RAY_VALUED = {"address", "working_dir", "runtime_env", "runtime_env_json", "submission_id", "job_id",
               "entrypoint_num_gpus", "entrypoint_num_cpus", "entrypoint_memory", "entrypoint_resources",
               "metadata_json", "log_style", "log_color", "headers"}


@family("ray")
def ray_job(ctx: Ctx, toks: list[str]) -> bool:
    """`ray job submit [options] -- python train.py ...`: the entrypoint runs as written on the cluster (its
    workers, if any, come from the code's own `ScalingConfig`)."""
    if toks[1:3] != ["job", "submit"]:
        return False
    if "--" in toks:
        rest = toks[toks.index("--") + 1:]
    else:
        i = 3
        while i < len(toks) and toks[i].startswith("-"):
            name, eq, _ = toks[i].lstrip("-").partition("=")
            i += 2 if not eq and name.replace("-", "_") in _RAY_VALUED else 1
        rest = toks[i:]
    return ctx.dispatch(rest) if rest else False
