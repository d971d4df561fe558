#!/usr/bin/env python3
"""Set up schedmate on a fresh machine (only Python needed) and run its main job or its tests.

    python3 bootstrap.py demo    # venv + package + local model server (llama.cpp), then the replay table
    python3 bootstrap.py test    # venv + package + model server(s) + Slurm and PostgreSQL packages when
                                 # root and apt are there, then pytest: the tests that need
                                 # no model while the server installs, then the LLM tests

The engines: llama.cpp by default (on a CPU it generates several times faster than vLLM and starts in
seconds); `SCHEDMATE_TEST_ENGINES=vllm,llamacpp python3 bootstrap.py test` adds the vLLM server (the
production engine; about 8 more minutes on a fresh 2-core machine) and its tests, and
`SCHEDMATE_DEMO_ENGINE=vllm python3 bootstrap.py demo` runs the demo through vLLM.

Standard library only: it must run before anything is installed. Everything it installs goes into
./.venv (the package) and $SCHEDMATE_HOME (default ~/.schedmate: model weights, engine venvs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
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


def home() -> Path:
    # the same rule as schedmate.llm.artifacts.schedmate_home, which this stdlib-only script cannot import
    return Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser()


def serve_in_background(engines: tuple[str, ...]) -> tuple[threading.Thread, list[str], Path]:
    """Start the engines' servers in a thread, their output in a log: on a fresh machine the llama.cpp
    install compiles for minutes on every core while pytest runs on one, so the tests that need no model
    run meanwhile. Returns the thread, the engines that failed (filled in by the thread) and the log."""
    log = home() / "run" / "bootstrap-serve.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []

    def run() -> None:
        with log.open("w") as out:
            for engine in engines:
                # niced: the compile takes what pytest leaves, so the live tests' daemons (Slurm, the service)
                # run on time beside it
                nice = ["nice", "-n", "10"] if shutil.which("nice") else []
                cmd = [*nice, str(SCHEDMATE), "llm", "serve", "--engine", engine]
                if subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, check=False).returncode:
                    failed.append(engine)

    say(f"starting the model server(s) {', '.join(engines)} in the background (log: {log})")
    thread = threading.Thread(target=run, name="serve", daemon=True)
    thread.start()
    return thread, failed, log


def passed(code: int) -> bool:
    return code in (0, 5)  # 5: this phase selected no test (e.g. `-k` matched only the other phase)


def test(extra: list[str]) -> int:
    setup()
    engines = tuple(e.strip() for e in os.environ.get("SCHEDMATE_TEST_ENGINES", "llamacpp").split(",") if e.strip())
    base_env = {**os.environ, "SCHEDMATE_REQUIRE_LLM": "1", "SCHEDMATE_TEST_ENGINES": ",".join(engines)}
    try:
        if any(a == "-m" or a.startswith("-m") and a[2:3] not in ("", "-") for a in extra):
            # the caller chose the markers: one run with the servers up
            local_servers()
            for engine in engines:
                serve(engine)
            return sh(PY, "-m", "pytest", "-q", *extra, env={**base_env, **llm_env(engines[-1])}, check=False)
        thread, failed, log = serve_in_background(engines)
        local_servers()
        say("phase 1: the tests that need no model server, while it installs and starts")
        first = sh(PY, "-m", "pytest", "-q", "-m", "not llm", *extra, env=base_env, check=False)
        thread.join()
        print(log.read_text()[-3000:], flush=True)
        if failed:
            say(f"the model server(s) {', '.join(failed)} did not start (log above); the LLM tests will fail")
            env = base_env
        else:
            env = {**base_env, **llm_env(engines[-1])}
        say("phase 2: the tests against the real model server")
        second = sh(PY, "-m", "pytest", "-q", "-m", "llm", *extra, env=env, check=False)
        if passed(first) and passed(second):
            return 0 if 0 in (first, second) else 5
        return first if not passed(first) else second
    finally:
        for engine in engines:
            sh(SCHEDMATE, "llm", "stop", "--engine", engine, check=False)


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
