"""Rebuild the real-jobs corpus into a local cache from fetched snapshots and registry packages.

    python -m eval.realjobs.rebuild [--mirror /work/.mirror] [--out $SCHEDMATE_HOME/realjobs]
    python -m eval.realjobs.rebuild save-excerpt --url URL < excerpt.txt   # keep an issue excerpt
    python -m eval.realjobs.rebuild recover-excerpt [--id ITEM] < candidate.txt  # find and keep a lost one

Snapshots are bare git directories as the `fetch` tool leaves them (`<mirror>/<owner>+<name>/repo`);
packages are downloaded with `pip download --no-deps` (the registry is reachable here). Every file a
label was read from is checked against its sha256; an item whose source is missing or changed is
reported and left out, never silently rebuilt from something else.

Output under `--out`:
- `src/<owner>+<name>@<commit12>/` the source tree at that commit; `src/pypi+<name>==<version>/` a package;
- `code/index.jsonl` one line per buildable code item: `id`, `root` (the source tree), `workdir`
  (`root/cwd`), `command`, `env`;
- `logs/<n>.log` and `logs/index.jsonl` (`id`, `path`);
- `excerpts/<sha256>.txt` issue excerpts saved at collection time (kept, never overwritten).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from eval.realjobs.corpus import CodeItem, LogItem, Origin, load_code_items, load_log_items


def default_out() -> Path:
    home = Path(os.environ.get("SCHEDMATE_HOME", Path.home() / ".schedmate"))
    return home / "realjobs"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mirror_dir(mirror: Path, repo: str) -> Path | None:
    want = repo.replace("/", "+").lower()
    if not mirror.is_dir():
        return None
    for d in mirror.iterdir():
        if d.name.lower() == want:
            git = d / "repo"
            if (git / ".git").is_dir():
                return git / ".git"  # a snapshot fetched with a work-tree layout
            return git if git.is_dir() else d
    return None


def git_show(gitdir: Path, commit: str, path: str) -> bytes | None:
    r = subprocess.run(["git", f"--git-dir={gitdir}", "show", f"{commit}:{path}"], capture_output=True, check=False)
    return r.stdout if r.returncode == 0 else None


MAX_EXTRACT_BYTES = 4 << 20
"""files larger than this are not extracted (weights, datasets); a job's scripts and configs are small"""


def extract_tree(gitdir: Path, commit: str, dest: Path) -> int:
    """Write the files of `commit` under `dest`, skipping blobs the snapshot lacks (fetched snapshots may
    leave out their largest files) and files over MAX_EXTRACT_BYTES; returns the number written."""
    ls = subprocess.run(["git", f"--git-dir={gitdir}", "ls-tree", "-r", "-z", "--long", commit],
                        capture_output=True, check=False)
    if ls.returncode != 0:
        raise ValueError(f"commit {commit} not in the snapshot {gitdir} "
                         f"({ls.stderr.decode(errors='replace').strip()[:200]})")
    wanted: list[tuple[str, str]] = []
    for entry in ls.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha, size = meta.split()
        if kind != b"blob" or mode == b"120000" or not size.isdigit() or int(size) > MAX_EXTRACT_BYTES:
            continue
        wanted.append((sha.decode(), path.decode(errors="replace")))
    proc = subprocess.Popen(["git", f"--git-dir={gitdir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    written = 0
    root = dest.resolve()
    for sha, path in wanted:
        proc.stdin.write(f"{sha}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the object
        target = (dest / path).resolve()
        if root not in target.parents:
            continue  # a path that would escape the cache directory
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    proc.stdin.close()
    proc.wait()
    return written


class Sources:
    """Source trees in the cache, extracted once per (repo, commit) or (package, version)."""

    def __init__(self, mirror: Path, out: Path) -> None:
        self.mirror, self.out = mirror, out
        self.problems: dict[str, str] = {}

    def tree(self, origin: Origin) -> Path | None:
        if origin.ref in self.problems:
            return None
        name = (f"{origin.repo.replace('/', '+')}@{origin.commit[:12]}" if origin.repo  # type: ignore[union-attr,index]
                else f"pypi+{origin.package}=={origin.version}")
        dest = self.out / "src" / name
        if (dest / ".complete").exists():
            return dest
        try:
            self._extract(origin, dest)
        except (OSError, subprocess.CalledProcessError, ValueError) as e:
            self.problems[origin.ref] = str(e)
            return None
        (dest / ".complete").write_text(origin.ref)
        return dest

    def _extract(self, origin: Origin, dest: Path) -> None:
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        if origin.repo:
            gitdir = mirror_dir(self.mirror, origin.repo)
            if gitdir is None:
                raise ValueError(f"no snapshot of {origin.repo} under {self.mirror}: fetch it first")
            extract_tree(gitdir, origin.commit, dest)  # type: ignore[arg-type]
            return
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp,
                            f"{origin.package}=={origin.version}"] +
                           (["--no-binary", ":all:"] if (origin.artifact or "").endswith(".tar.gz") else []),
                           check=True, capture_output=True)
            files = sorted(Path(tmp).iterdir())
            pick = [f for f in files if origin.artifact and f.name == origin.artifact] or files
            art = pick[0]
            if art.suffix == ".whl" or art.suffix == ".zip":
                with zipfile.ZipFile(art) as z:
                    for m in z.infolist():
                        target = (dest / m.filename).resolve()
                        if not str(target).startswith(str(dest.resolve())):
                            raise ValueError(f"{art.name}: member {m.filename} escapes the directory")
                    z.extractall(dest)
            else:
                with tarfile.open(art) as tar:
                    tar.extractall(dest, filter="data")


def verify(tree: Path, refs: list, item_id: str) -> str | None:
    for ref in refs:
        p = tree / ref.path
        if not p.is_file():
            return f"{item_id}: {ref.path} missing from the source"
        if sha256_bytes(p.read_bytes()) != ref.sha256:
            return f"{item_id}: {ref.path} sha256 differs from the manifest"
    return None


_PROMPT = re.compile(r"^\s*(\$|>>>)\s+")


def command_text(raw: str) -> str:
    """A documented command from its lines: prompts dropped, continuation lines joined."""
    out: list[str] = []
    for line in raw.splitlines():
        if line.strip().startswith("```"):
            continue  # a Markdown fence around the command is not part of it
        line = _PROMPT.sub("", line, count=1) if not out or not out[-1].endswith("\\") else line
        out.append(line.rstrip())
    return re.sub(r"\\\n\s*", " ", "\n".join(out)).strip()


def build_code(items: list[CodeItem], sources: Sources, out: Path) -> tuple[int, list[str]]:
    index, problems = [], []
    for it in items:
        tree = sources.tree(it.origin)
        if tree is None:
            problems.append(f"{it.id}: {sources.problems.get(it.origin.ref)}")
            continue
        bad = verify(tree, it.files, it.id)
        if it.command_from and not bad:
            bad = verify(tree, [it.command_from], it.id)
        if bad:
            problems.append(bad)
            continue
        if it.command_from:
            a, b = it.command_from.lines
            lines = (tree / it.command_from.path).read_text(errors="replace").splitlines()[a - 1:b]
            command = command_text("\n".join(lines))
        else:
            command = it.command  # type: ignore[assignment]
        workdir = (tree / it.cwd).resolve()
        if not workdir.is_dir():
            problems.append(f"{it.id}: cwd {it.cwd} is not a directory of the source")
            continue
        index.append({"id": it.id, "root": str(tree), "workdir": str(workdir), "cwd": it.cwd,
                      "command": command, "env": it.env})
    (out / "code").mkdir(parents=True, exist_ok=True)
    (out / "code" / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    return len(index), problems


def excerpt_lines(text: str, lines: tuple[int, int] | None) -> str:
    rows = text.splitlines()
    if lines:
        rows = rows[lines[0] - 1:lines[1]]
    return "\n".join(rows) + "\n"


def build_logs(items: list[LogItem], sources: Sources, out: Path) -> tuple[int, list[str]]:
    index, problems = [], []
    logdir = out / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    for n, it in enumerate(items):
        src = it.source
        if src.issue_url:
            saved = out / "excerpts" / f"{src.excerpt_sha256}.txt"
            if not saved.is_file():
                problems.append(f"{it.id}: issue excerpt not saved here ({src.issue_url}); "
                                "re-collect it with the search tool and save-excerpt")
                continue
            text = saved.read_text()
        else:
            tree = sources.tree(src.origin)  # type: ignore[arg-type]
            if tree is None:
                problems.append(f"{it.id}: {sources.problems.get(src.origin.ref)}")  # type: ignore[union-attr]
                continue
            p = tree / src.path  # type: ignore[operator]
            if not p.is_file() or sha256_bytes(p.read_bytes()) != src.sha256:
                problems.append(f"{it.id}: {src.path} missing or changed")
                continue
            text = excerpt_lines(p.read_text(errors="replace"), src.lines)
        if sha256_bytes(text.encode()) != src.excerpt_sha256:
            problems.append(f"{it.id}: excerpt sha256 differs from the manifest")
            continue
        dest = logdir / f"{n:04d}.log"
        dest.write_text(text)
        index.append({"id": it.id, "path": str(dest)})
    (logdir / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    return len(index), problems


def save_excerpt(url: str, text: str, out: Path) -> str:
    if not text.endswith("\n"):
        text += "\n"
    digest = sha256_bytes(text.encode())
    d = out / "excerpts"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{digest}.txt"
    if not p.exists():
        p.write_text(text)
    (d / "sources.jsonl").open("a").write(json.dumps({"sha256": digest, "issue_url": url}) + "\n")
    return digest


def _line_variants(lines: list[str]) -> list[list[str]]:
    """The ways a copy of a quoted excerpt may differ from what was saved: trailing blanks, quote marks."""
    unquoted = [ln.removeprefix(">").removeprefix(" ") if ln.startswith(">") else ln for ln in lines]
    return [lines, [ln.rstrip() for ln in lines], unquoted, [ln.rstrip() for ln in unquoted]]


def recover_excerpt(candidate: str, wanted: dict[str, str]) -> list[tuple[str, str]]:
    """Every contiguous run of lines of `candidate` (a search result's text, say) whose digest (lines joined
    with newlines, plus a final newline) is one of `wanted` ({excerpt_sha256: label}); returns
    [(digest, text)], one per digest found."""
    found: dict[str, str] = {}
    for lines in _line_variants(candidate.replace("\r\n", "\n").split("\n")):
        for a in range(len(lines)):
            text = ""
            for line in lines[a:]:
                text += line + "\n"
                digest = sha256_bytes(text.encode())
                if digest in wanted and digest not in found:
                    found[digest] = text
    return list(found.items())


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["recover-excerpt"]:
        ap = argparse.ArgumentParser(prog="rebuild recover-excerpt",
                                     description="Find, in a candidate text on stdin (an issue thread's quoted "
                                     "text as the search tool returns it), the line run whose digest an issue "
                                     "excerpt of the corpus names, and save it; the item's `find` query brings "
                                     "the candidate back.")
        ap.add_argument("--id", default=None, help="only this item (default: every issue excerpt not saved yet)")
        ap.add_argument("--out", type=Path, default=default_out())
        a = ap.parse_args(argv[1:])
        items = [i for i in load_log_items() if i.source.issue_url and (a.id is None or i.id == a.id)]
        if a.id and not items:
            print(f"no issue-excerpt item {a.id!r}", file=sys.stderr)
            return 2
        if a.id is None:
            items = [i for i in items if not (a.out / "excerpts" / f"{i.source.excerpt_sha256}.txt").is_file()]
        by_digest = {i.source.excerpt_sha256: i for i in items}
        hits = recover_excerpt(sys.stdin.read(), {d: i.id for d, i in by_digest.items()})
        for digest, text in hits:
            it = by_digest[digest]
            save_excerpt(it.source.issue_url, text, a.out)  # type: ignore[arg-type]
            print(f"{it.id}: recovered ({text.count(chr(10))} lines) -> {digest}")
        if not hits:
            print("no line run of the candidate has a wanted digest", file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["save-excerpt"]:
        ap = argparse.ArgumentParser(prog="rebuild save-excerpt")
        ap.add_argument("--url", required=True)
        ap.add_argument("--out", type=Path, default=default_out())
        a = ap.parse_args(argv[1:])
        print(save_excerpt(a.url, sys.stdin.read(), a.out))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=default_out())
    ap.add_argument("--only", choices=("code", "logs"), default=None)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    sources = Sources(a.mirror, a.out)
    problems: list[str] = []
    if a.only in (None, "code"):
        n, p = build_code(load_code_items(), sources, a.out)
        problems += p
        print(f"code items built: {n} -> {a.out / 'code' / 'index.jsonl'}")
    if a.only in (None, "logs"):
        n, p = build_logs(load_log_items(), sources, a.out)
        problems += p
        print(f"log items built: {n} -> {a.out / 'logs' / 'index.jsonl'}")
    for line in problems:
        print(f"  not built: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
