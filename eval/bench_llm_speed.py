"""LLM serving speed on this machine: prompt and generation tokens/s of one server, plain and structured calls.

    eval "$(schedmate llm env --engine vllm)"; python eval/bench_llm_speed.py          # the server in the env
    python eval/bench_llm_speed.py --base-url http://127.0.0.1:8101/v1 --dialect llamacpp --repeats 3

The prompt is a job script of the code dataset (`ddp_resnet50_imagenet`, about 700 tokens with the chat
template) under a unique first line, so neither vLLM's prefix cache nor llama.cpp's prompt cache can skip
the prefill. Each call is streamed at temperature 0:

* prompt tok/s = prompt tokens / time to the first token (which also holds one decode step and the HTTP
  round trip, so it is a lower bound);
* generation tok/s = (completion tokens - 1) / (time from the first to the last token);
* cpu ms/token: CPU seconds of the server's processes (all of its session, found by its port in /proc) during
  the decode, per generated token; unlike wall time this barely moves with the load of a shared machine, so it
  compares settings (dtype, threads) measured at different times. `-` where /proc is not readable.

Calls, in order: `plain` (explain the script, 128 tokens at most), `structured-new` (a JSON schema the server
has never seen: its property names carry a fresh suffix, so the grammar is compiled in this call), then
`structured-same` (the same schema again: a compiled-grammar cache answers, if the engine has one). With
--repeats N the three are run N times (a new schema each round) and every call is printed; the load average
is printed with them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "eval" / "datasets" / "code" / "jobs" / "ddp_resnet50_imagenet" / "train_imagenet.py"
ASK_PLAIN = "Explain what this training script does, step by step."
ASK_JSON = "Extract the facts of this training job as JSON matching the schema."


def schema(suffix: str) -> dict[str, Any]:
    """A small extraction schema; `suffix` makes its property names, hence its grammar, new."""
    props = {
        f"model_family_{suffix}": {"enum": ["cnn", "vit", "gpt", "bert", "mlp", "other"]},
        f"micro_batch_size_{suffix}": {"type": ["integer", "null"]},
        f"epochs_{suffix}": {"type": ["integer", "null"]},
        f"data_parallel_{suffix}": {"enum": ["ddp", "fsdp", "zero", "none"]},
        f"summary_{suffix}": {"type": "string", "maxLength": 160},
    }
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def response_format(dialect: str, sch: dict[str, Any]) -> dict[str, Any]:
    if dialect == "llamacpp":  # llama-cpp-python rejects json_schema (see schedmate.llm.client)
        return {"type": "json_object", "schema": sch}
    return {"type": "json_schema", "json_schema": {"name": "facts", "schema": sch, "strict": True}}


def server_session(base_url: str) -> int | None:
    """The session id of the local server process listening on `base_url`'s port (it started with setsid)."""
    port = httpx.URL(base_url).port
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            if b"--port" in args and args[args.index(b"--port") + 1] == str(port).encode():
                return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[3])
        except (OSError, ValueError, IndexError):
            continue
    return None


def cpu_seconds(session: int | None) -> float | None:
    """User + system CPU seconds of every live process of `session`."""
    if session is None:
        return None
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:
                total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def call(base_url: str, model: str, ask: str, fmt: dict[str, Any] | None, max_tokens: int,
         session: int | None = None) -> dict[str, Any]:
    """One streamed chat call; its timings, token counts and the server's CPU time while decoding."""
    messages = [
        {"role": "system", "content": f"Run {uuid.uuid4().hex}. You read GPU training jobs."},
        {"role": "user", "content": f"{ask}\n\n```python\n{JOB.read_text()}\n```"},
    ]
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0, "max_tokens": max_tokens,
                            "stream": True, "stream_options": {"include_usage": True}}
    if fmt is not None:
        body["response_format"] = fmt
    t0 = time.perf_counter()
    first = last = None
    chunks, usage = 0, None
    cpu_first = None
    with httpx.stream("POST", base_url.rstrip("/") + "/chat/completions", json=body, timeout=600) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            usage = event.get("usage") or usage
            for choice in event.get("choices") or []:
                if (choice.get("delta") or {}).get("content"):
                    now = time.perf_counter()
                    if first is None:
                        first, cpu_first = now, cpu_seconds(session)
                    last = now
                    chunks += 1
    cpu_last = cpu_seconds(session)
    if first is None or last is None:
        raise RuntimeError("the server streamed no content")
    prompt_tokens = (usage or {}).get("prompt_tokens")
    completion = (usage or {}).get("completion_tokens") or chunks
    ttft, decode = first - t0, last - first
    return {
        "prompt_tokens": prompt_tokens, "completion_tokens": completion, "ttft_s": round(ttft, 3),
        "total_s": round(last - t0, 3),
        "prompt_tok_s": round(prompt_tokens / ttft, 1) if prompt_tokens else None,
        "gen_tok_s": round((completion - 1) / decode, 1) if decode > 0 and completion > 1 else None,
        "cpu_ms_per_token": (round(1000 * (cpu_last - cpu_first) / (completion - 1), 1)
                             if cpu_first is not None and cpu_last is not None and completion > 1 else None),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", default=os.environ.get("SCHEDMATE_LLM_BASE_URL"))
    ap.add_argument("--model", default=os.environ.get("SCHEDMATE_LLM_MODEL", "qwen2.5-coder-0.5b"))
    ap.add_argument("--dialect", default=os.environ.get("SCHEDMATE_LLM_DIALECT", "vllm"))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--label", default="", help="A name for this configuration, printed with every row.")
    args = ap.parse_args()
    if not args.base_url:
        sys.exit("no server: pass --base-url or eval \"$(schedmate llm env --engine ...)\" first")
    session = server_session(args.base_url)
    for _ in range(args.repeats):
        sch = schema(uuid.uuid4().hex[:6])
        runs = [("plain", ASK_PLAIN, None), ("structured-new", ASK_JSON, response_format(args.dialect, sch)),
                ("structured-same", ASK_JSON, response_format(args.dialect, sch))]
        for name, ask, fmt in runs:
            row = call(args.base_url, args.model, ask, fmt, args.max_tokens, session)
            print(json.dumps({"label": args.label, "call": name, **row, "load1": round(os.getloadavg()[0], 2)}),
                  flush=True)


if __name__ == "__main__":
    main()
