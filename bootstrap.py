#!/usr/bin/env python3
"""Set up schedmate on a fresh machine (only Python needed) and run its main job or its tests.

    python3 bootstrap.py demo    # venv + package + local model server (llama.cpp), then the replay table
    python3 bootstrap.py test    # venv + package + model server(s) + Slurm and PostgreSQL packages when
                                 # root and apt are there, then pytest

The engines: llama.cpp by default (on a CPU it generates several times faster than vLLM and starts in
seconds); `SCHEDMATE_TEST_ENGINES=vllm,llamacpp python3 bootstrap.py test` adds the vLLM server (the
production engine; about 8 more minutes on a fresh 2-core machine) and its tests, and
`SCHEDMATE_DEMO_ENGINE=vllm python3 bootstrap.py demo` runs the demo through vLLM.

Standard library only: it must run before anything is installed. Everything it installs goes into
./.venv (the package) and $SCHEDMATE_HOME (default ~/.schedmate: model weights, engine venvs).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
SCHEDMATE = VENV / "bin" / "schedmate"
STAMP = VENV / ".schedmate-installed"


def say(msg: str) -> None:
    print(f"[bootstrap {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(*cmd: str | Path, env: dict[str, str] | None = None, check: bool = True) -> int:
    say("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env, check=check).returncode


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - bootstrap runs on any python3 and says why it stops
        sys.exit(f"schedmate needs Python 3.11+, this is {sys.version.split()[0]}")
    if not PY.exists():
        sh(sys.executable, "-m", "venv", VENV)
    # Reinstall when the project metadata changed since the last install.
    fingerprint = str((ROOT / "pyproject.toml").stat().st_mtime_ns)
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        say("package already installed")
        return
    sh(PY, "-m", "pip", "install", "-q", "-U", "pip")
    # torch first, pinned: the local CPU wheel. A bare torch requirement would pull a multi-GB CUDA build.
    sh(PY, "-m", "pip", "install", "-q", "torch==2.13.0")
    sh(PY, "-m", "pip", "install", "-q", "-e", ".[rag,dev,serve,agent,sweep]")
    STAMP.write_text(fingerprint)


def serve(engine: str) -> None:
    """Pull the model, install the engine and start its server (each step idempotent)."""
    sh(SCHEDMATE, "llm", "serve", "--engine", engine)


def llm_env(engine: str) -> dict[str, str]:
    out = subprocess.run([str(SCHEDMATE), "llm", "env", "--engine", engine], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    env = {}
    for line in out.splitlines():
        line = line.removeprefix("export ").strip()
        if "=" in line:
            key, value = line.split("=", 1)
            env[key] = value.strip("'\"")
    return env


def demo() -> int:
    setup()
    engine = os.environ.get("SCHEDMATE_DEMO_ENGINE", "llamacpp")
    serve(engine)
    env = {**os.environ, **llm_env(engine)}
    return sh(SCHEDMATE, "demo", env=env, check=False)


def apt_best_effort(present: bool, packages: tuple[str, ...], why: str) -> None:
    """Best effort: install Debian packages a live test needs (root and apt-get only; else the test says
    why it skips)."""
    import shutil

    if present or not shutil.which("apt-get") or os.geteuid() != 0:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ("apt-get", "install", "-y", "-q", "--no-install-recommends", *packages)
    try:
        if sh(*install, env=env, check=False) != 0:
            sh("apt-get", "update", "-q", env=env, check=False)
            sh(*install, env=env, check=False)
    except OSError as e:
        say(f"{why}: install skipped: {e}")


def local_servers() -> None:
    """Slurm for the live adapter and plugin tests (tests/adapters/test_slurm_*live.py start a one-node
    Slurm on loopback) and the PostgreSQL server for the service's PostgreSQL test (tests/service/test_service_store.py
    starts a private cluster on a free port)."""
    import glob
    import shutil

    # Slurm (with curl for schedmate's job_submit.lua; slurm-wlm brings its Lua 5.1 plugin)
    wanted = {"slurmctld": "slurm-wlm", "munged": "munge", "curl": "curl"}
    missing = tuple(sorted({pkg for binary, pkg in wanted.items()
                            if not shutil.which(binary) and not Path("/usr/sbin", binary).exists()}))
    apt_best_effort(not missing, missing, "slurm")
    apt_best_effort(bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")), ("postgresql",), "postgresql")


def test(extra: list[str]) -> int:
    setup()
    local_servers()
    engines = tuple(e.strip() for e in os.environ.get("SCHEDMATE_TEST_ENGINES", "llamacpp").split(",") if e.strip())
    try:
        for engine in engines:
            serve(engine)
        env = {**os.environ, **llm_env(engines[-1]), "SCHEDMATE_REQUIRE_LLM": "1",
               "SCHEDMATE_TEST_ENGINES": ",".join(engines)}
        code = sh(PY, "-m", "pytest", "-q", *extra, env=env, check=False)
    finally:
        for engine in engines:
            sh(SCHEDMATE, "llm", "stop", "--engine", engine, check=False)
    return code


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("setup", "demo", "test"):
        print(__doc__)
        return 2
    what = sys.argv[1]
    if what == "setup":
        setup()
        return 0
    if what == "demo":
        return demo()
    return test(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
