"""A job's code uploaded as a tarball: checked member by member, then unpacked under the service's upload root.

Refused, with the member named (nothing is unpacked from a refused archive):
* not a tar archive (plain, gzip, bzip2 or xz): `UploadRefused(415)`;
* a symlink, hard link, device, FIFO, an absolute path, a `..` component, a name with a NUL or control
  character: `UploadRefused(400)`;
* more than `max_members` members or more than `max_unpacked` bytes once unpacked (a compression bomb is
  caught from the members' declared sizes before anything is written, and the stream is read at most to
  that bound): `UploadRefused(413)`.
Files are written with mode 0644 and directories 0755 whatever the archive says; nothing in it is executed.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
import uuid
from pathlib import Path, PurePosixPath

BAD_CHARS = re.compile(r"[\x00-\x1f\x7f]")


class UploadRefused(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _check_name(name: str) -> PurePosixPath:
    if BAD_CHARS.search(name):
        raise UploadRefused(400, f"member {name!r}: control characters in the name")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("/"):
        raise UploadRefused(400, f"member {name!r}: absolute path")
    if ".." in p.parts:
        raise UploadRefused(400, f"member {name!r}: path traversal ('..')")
    return p


def check_members(data: bytes, max_members: int, max_unpacked: int) -> list[tuple[tarfile.TarInfo, PurePosixPath]]:
    """Every member checked against the rules above; the archive is read to its end only when it passes."""
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 - closed by the `with` below
    except (tarfile.TarError, EOFError, OSError) as e:
        raise UploadRefused(415, f"not a tar archive (tar, tar.gz, tar.bz2, tar.xz): {e}") from None
    members: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
    total = 0
    try:
        with tar:
            while True:
                m = tar.next()
                if m is None:
                    break
                path = _check_name(m.name)
                if m.issym() or m.islnk():
                    raise UploadRefused(400, f"member {m.name!r}: {'symlink' if m.issym() else 'hard link'} "
                                             f"to {m.linkname!r} (links are refused)")
                if not (m.isfile() or m.isdir()):
                    raise UploadRefused(400, f"member {m.name!r}: not a regular file or directory")
                total += m.size
                if total > max_unpacked:
                    raise UploadRefused(413, f"archive unpacks to over {max_unpacked} bytes (at member {m.name!r})")
                members.append((m, path))
                if len(members) > max_members:
                    raise UploadRefused(413, f"archive has over {max_members} members")
    except (tarfile.TarError, EOFError, OSError, ValueError) as e:
        if isinstance(e, UploadRefused):
            raise
        raise UploadRefused(415, f"corrupt tar archive: {e}") from None
    return members


def unpack(data: bytes, root: Path, job_id: str, max_members: int = 10_000,
           max_unpacked: int = 64 << 20) -> Path:
    """Check, then unpack into a new directory under `root`; returns it."""
    members = check_members(data, max_members, max_unpacked)
    safe = re.sub(r"[^\w.-]", "_", job_id)[:80]
    dest = root / f"{safe}-{uuid.uuid4().hex[:12]}"
    dest.mkdir(parents=True, mode=0o755)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for m, path in members:
                target = dest.joinpath(*path.parts) if path.parts else dest
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True, mode=0o755)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
                src = tar.extractfile(m)
                if src is None:
                    continue
                with src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
                os.chmod(target, 0o644)
    except OSError as e:  # e.g. a file and a directory of the same name
        shutil.rmtree(dest, ignore_errors=True)
        raise UploadRefused(400, f"cannot unpack: {e}") from None
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest
