"""What `schedmate watch slurm` reads: the jobs (`squeue --json`) and each job's StdOut file.

The output path is expanded here from the job's own `--output` pattern (squeue prints it unexpanded): a
parser of `scontrol show job`'s text could be fooled by a Comment holding a newline and `StdOut=/etc/...`.
The watcher runs as root, so a file is only read when it is a regular file (not a symlink, FIFO or device)
owned by the job's user: a job cannot point the watcher at someone else's file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from adapters.base import AdapterError, JobView
from adapters.slurm import _number, parse_squeue_json
from adapters.slurm_live.submit import ADMIN_COMMENT_PREFIX, SERVICE_ID

CHUNK_BYTES = 256 << 10


class WatchJob(BaseModel):
    """One job as the watcher needs it: the adapter's `JobView` plus where its log is and who owns it."""

    view: JobView
    service_id: str | None = None
    """From AdminComment=schedmate:id=...: only jobs the submission plugin registered are followed."""
    user_id: int | None = None
    user_name: str = ""
    name: str = ""
    cwd: str = ""
    stdout: str = ""
    """The --output pattern as submitted ('' = Slurm's default)."""
    restarts: int = 0
    start_time: float | None = None
    end_time: float | None = None
    array_job_id: int | None = None
    array_task_id: int | None = None
    requeue: bool | None = None


def _int(v: Any) -> int | None:
    n = _number(v)
    return None if n is None else int(n)


def parse_watch_jobs(text: str, now: float | None = None) -> dict[str, WatchJob]:
    """`squeue --json` -> jobs keyed by plain job id. AdapterError when the output is not squeue's JSON."""
    views = parse_squeue_json(text, now)
    out: dict[str, WatchJob] = {}
    for j in json.loads(text)["jobs"]:
        if not isinstance(j, dict) or _int(j.get("job_id")) is None:
            continue
        jid = str(_int(j["job_id"]))
        admin = str(j.get("admin_comment") or "")
        sid = admin[len(ADMIN_COMMENT_PREFIX):] if admin.startswith(ADMIN_COMMENT_PREFIX) else ""
        task = _int(j.get("array_task_id"))
        requeue = j.get("requeue")
        out[jid] = WatchJob(
            view=views[jid], service_id=sid if SERVICE_ID.fullmatch(sid) else None, user_id=_int(j.get("user_id")),
            user_name=str(j.get("user_name") or ""), name=str(j.get("name") or ""),
            cwd=str(j.get("current_working_directory") or ""), stdout=str(j.get("standard_output") or ""),
            restarts=_int(j.get("restart_cnt")) or 0, start_time=_number(j.get("start_time")) or None,
            end_time=_number(j.get("end_time")) or None,
            array_job_id=_int(j.get("array_job_id")) or None, array_task_id=task,
            requeue=requeue if isinstance(requeue, bool) else None)
    return out


_FIELD = re.compile(r"%(\d*)(.)")


def output_path(job: WatchJob) -> Path:
    """The file Slurm writes the batch step's stdout to, from the --output pattern (sbatch's filename
    patterns: %% %A %a %j %n %t %u %x, with zero-padding widths). AdapterError for what cannot be
    expanded here: %N (slurmd writes the host's own name, which need not be the Slurm node name), %J, %s,
    a backslash (it turns the patterns off) and %a of a job that is not an array task."""
    array = job.array_task_id is not None
    pattern = job.stdout or ("slurm-%A_%a.out" if array else "slurm-%j.out")
    if "\\" in pattern:
        raise AdapterError(f"output pattern {pattern!r} has a backslash: not expanded")
    jid = int(job.view.id)
    numbers = {"A": job.array_job_id or jid, "a": job.array_task_id, "j": jid, "n": 0, "t": 0}
    words = {"u": job.user_name, "x": job.name}

    def one(m: re.Match[str]) -> str:
        width, key = m.group(1), m.group(2)
        if key == "%":
            return "%"
        if key in numbers:
            n = numbers[key]
            if n is None:
                raise AdapterError(f"output pattern {pattern!r}: %{key} of a job that is not an array task")
            return f"{n:0{min(int(width or 0), 10)}d}"
        if words.get(key):
            return words[key]
        raise AdapterError(f"output pattern {pattern!r}: %{width}{key} not expanded")

    path = Path(_FIELD.sub(one, pattern))
    if not path.is_absolute():
        if not job.cwd:
            raise AdapterError("relative output path and no working directory")
        path = Path(job.cwd) / path
    return path


def read_new(path: Path, offset: int, uid: int | None, limit: int = CHUNK_BYTES) -> tuple[bytes, int]:
    """Up to `limit` bytes after `offset` -> (bytes, offset they start at): 0 when the file shrank (a requeued
    job's output is truncated). AdapterError (said to the operator, never followed) for a file that is not
    a regular file owned by `uid` (or when the job's owner is unknown); a missing file reads as empty (the
    job has not written yet)."""
    if uid is None:
        raise AdapterError(f"{path}: the job's user is unknown, so whose file it may read is too: not followed")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return b"", offset
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise AdapterError(f"{path} is a symbolic link: not followed") from None
        raise AdapterError(f"{path}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise AdapterError(f"{path} is not a regular file: not followed")
        if st.st_uid != uid:
            raise AdapterError(f"{path} belongs to uid {st.st_uid}, not to the job's user {uid}: not followed")
        if st.st_size < offset:
            offset = 0
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, limit), offset
    finally:
        os.close(fd)


def complete_lines(data: bytes, final: bool, limit: int = CHUNK_BYTES) -> bytes:
    """What to post now: whole lines only (a partial line waits for its end), unless the job has ended or
    one line fills a whole chunk."""
    if final or len(data) >= limit:
        return data
    cut = data.rfind(b"\n")
    return data[: cut + 1] if cut >= 0 else b""
