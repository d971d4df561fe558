"""`POST /v1/slurm/submit`: the annotation service's answer to `job_submit.lua` (text/plain key=value lines).

Registered by `schedmate.service.app.create_app`. The job is stored like any `POST /v1/jobs` under the id
`slurm-<key>` (the Slurm job id does not exist yet at submission; the shim writes this id into the job's
AdminComment, which only Slurm operators can change, and `schedmate watch slurm` finds it there). A
workdir outside the service's `--root`s is not read: the job is then annotated from its script alone.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import PlainTextResponse
from pydantic import ValidationError

from adapters.slurm_live.submit import SlurmSettings, SubmitPolicy, SubmitRequest, answer_text, settings_for
from schedmate.records import Annotation
from schedmate.service.annotate import MAX_COMMAND_CHARS, JobRequest

MAX_SCRIPT_FILE = 1 << 20


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def command_for(sub: SubmitRequest, roots: list[Path]) -> str:
    """What the code analyzer is given as the job's command.

    `sbatch --wrap` jobs: the wrapped command. Batch scripts still on disk, unchanged, inside an allowed
    root: `sbatch [--nodes=N] [--gpus-per-node=G] <script> <args>` (the analyzer then reads the script
    with its #SBATCH lines and follows it into the code). Otherwise the script text itself."""
    wrapped = sub.wrapped_command()
    if wrapped:
        return wrapped[:MAX_COMMAND_CHARS]
    script = sub.script or ""
    if sub.argv and sub.work_dir and script and roots:
        workdir = Path(sub.work_dir).resolve()
        path = (workdir / sub.argv[0]).resolve()
        try:
            same = (_inside(path, roots) and path.is_file() and path.stat().st_size <= MAX_SCRIPT_FILE
                    and path.read_bytes().decode("utf-8", errors="replace") == script)
        except OSError:
            same = False
        if same:
            name = str(path.relative_to(workdir)) if workdir in path.parents else str(path)
            opts = [f"--nodes={sub.nodes()}"] if sub.nodes() > 1 else []
            per_node = sub.num_gpus() // sub.nodes() if sub.num_gpus() % sub.nodes() == 0 else 0
            opts += [f"--gpus-per-node={per_node}"] if per_node else []
            command = shlex.join(["sbatch", *opts, name, *sub.argv[1:]])
            if len(command) <= MAX_COMMAND_CHARS:
                return command
    return (script or sub.name or "batch job")[:MAX_COMMAND_CHARS]


def job_request(sub: SubmitRequest, roots: list[Path], with_workdir: bool = True) -> JobRequest:
    requested = sub.requested_minutes()
    return JobRequest(id=f"slurm-{sub.key}", command=command_for(sub, roots),
                      workdir=sub.work_dir if with_workdir else None, user=sub.user, num_gpus=sub.num_gpus(),
                      submit_time=time.time(), requested_time_s=None if requested is None else requested * 60.0)


async def answer(sub: SubmitRequest, roots: list[Path], accept: Callable[[JobRequest, str], Awaitable[dict[str, Any]]],
                 who: str) -> SlurmSettings:
    """Annotate and store the job; its Slurm settings. HTTPException for what the shim should log."""
    try:
        policy = SubmitPolicy.model_validate(sub.options)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise HTTPException(422, f"schedmate_submit.conf: {where}: {first['msg']}") from None
    notes: list[str] = []
    try:
        req = job_request(sub, roots, with_workdir=bool(sub.work_dir and roots))
    except ValidationError as e:
        raise HTTPException(422, f"job request: {e.errors()[0]['msg']}") from None
    try:
        body = await accept(req, who)
    except HTTPException as e:  # a workdir the service may not read: the script alone still says something
        if e.status_code != 400 or req.workdir is None:
            raise
        notes.append(f"workdir not read: {e.detail}")
        req = req.model_copy(update={"workdir": None})
        body = await accept(req, who)
    ann = Annotation.model_validate(body["annotation"])
    settings = settings_for(ann, sub, policy, req.id)
    settings.notes[:0] = notes
    return settings


def add_routes(app: FastAPI, accept: Callable[[JobRequest, str], Awaitable[dict[str, Any]]],
               who: Callable[[Request], str], roots: list[Path]) -> None:
    """`accept(request, client)` annotates and stores a new job (what `POST /v1/jobs` does), raising
    HTTPException (400 refused, 409 duplicate, 503 ...); `who(request)` is the authenticated client (the
    service's auth middleware has checked the submit scope of every POST under /v1/)."""

    @app.post("/v1/slurm/submit", response_class=PlainTextResponse,
              summary="A Slurm job at submission (from job_submit.lua) -> the settings to apply, key=value lines")
    async def slurm_submit(sub: SubmitRequest, request: Request) -> str:
        return answer_text(await answer(sub, roots, accept, who(request)))
