"""Load, fault and durability benchmark of the annotation service (`schedmate serve`) on loopback.

    python -m eval.bench_service                                  # 20k submissions, 200 clients, static only
    python -m eval.bench_service --llm                            # the same with LLM refinement behind the queue
    python -m eval.bench_service --kill-at 0.5                    # kill -9 the service halfway, restart, count
    python -m eval.bench_service --stop-llm-at 0.5 --llm-port 8111  # start a model server, stop it halfway
    python -m eval.bench_service --rate 500                       # open loop: 500 submissions/s offered
    python -m eval.bench_service --out result.json

It starts the service as its own process (`schedmate serve`, a fresh SQLite database in a temporary
directory), warms the history with `--warm` finished jobs, then `--clients` concurrent clients (one
keep-alive connection each) send `--requests` submissions in all: 90 % command-only jobs, 10 % with a
workdir from `eval/datasets/code/jobs` (the code analyzer's static pass; its version cache answers repeats).
It reports throughput, p50/p99 latency, errors by status, and **lost**: submissions the service
acknowledged (2xx) that are not in its database afterwards (read back through `GET /v1/jobs`, after a
restart when `--kill-at` killed it). Bounded in count (`--requests`) and time (`--max-seconds`); it only
talks to 127.0.0.1.

The clients are a minimal HTTP/1.1 keep-alive client on asyncio streams (not httpx), so that on a 2-core
machine the load generator takes as little of the CPU the service is measured on as it can.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "eval" / "datasets" / "code" / "jobs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    """One keep-alive HTTP/1.1 connection; responses must carry Content-Length (uvicorn's JSON ones do)."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {self.token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        try:
            self.writer.write(head + body)
            await self.writer.drain()
            status_line = await self.reader.readuntil(b"\r\n")
            length = 0
            while True:
                line = await self.reader.readuntil(b"\r\n")
                if line == b"\r\n":
                    break
                k, _, v = line.decode("latin-1").partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v)
            data = await self.reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            self.close()
            raise ConnectionError("connection lost") from None
        return int(status_line.split()[1]), data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def job_body(i: int, prefix: str, workdirs: list[Path]) -> dict[str, Any]:
    if workdirs and i % 10 == 0:
        wd = workdirs[(i // 10) % len(workdirs)]
        command = (wd / "command.txt").read_text().strip() if (wd / "command.txt").exists() else "python train.py"
        return {"id": f"{prefix}{i}", "command": command, "workdir": str(wd), "user": f"u{i % 50}", "num_gpus": 8}
    return {"id": f"{prefix}{i}", "user": f"u{i % 50}", "num_gpus": [1, 2, 4, 8, 16, 32][i % 6],
            "command": f"torchrun --nproc_per_node=8 train.py --model m{i % 40} --lr 0.{i % 7 + 1} --max_steps {1000 * (i % 9 + 1)}"}


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    acked: set[str] = field(default_factory=set)
    statuses: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    sent: int = 0


class Service:
    """`schedmate serve` as a child process; `kill()` is SIGKILL, `start()` again reuses the database."""

    def __init__(self, db: Path, port: int, llm: bool, durability: str, env: dict[str, str]) -> None:
        self.db, self.port, self.llm, self.durability, self.env = db, port, llm, durability, env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "schedmate.cli", "serve", "--port", str(self.port), "--db", str(self.db),
               "--root", str(JOBS), "--rate", "1000000", "--durability", self.durability]
        if self.llm:
            cmd.append("--llm")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=open(self.db.with_suffix(".log"), "ab"))  # noqa: SIM115
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the service exited ({self.proc.returncode}); see {self.db.with_suffix('.log')}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the service did not start within 120 s")

    def cpu_seconds(self) -> float:
        """User + system CPU time of the service process so far (all its threads), from /proc."""
        if self.proc is None:
            return 0.0
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


async def load(port: int, token: str, n: int, clients: int, prefix: str, workdirs: list[Path], max_s: float,
               on_progress: Any = None, rate: float | None = None) -> tuple[Run, float]:
    """Closed loop (each client sends its next request when the last one answered) or, with `rate`, open
    loop: request i is due at start + i / rate, and its latency counts from then (a request that waited for
    a free client is late by that wait: no coordinated omission)."""
    run = Run()
    counter = iter(range(n))
    start = time.perf_counter()
    t_end = start + max_s

    async def client() -> None:
        conn = Conn(port, token)
        for i in counter:
            if time.perf_counter() > t_end:
                break
            body = json.dumps(job_body(i, prefix, workdirs)).encode()
            due = None
            if rate:
                due = start + i / rate
                if due > time.perf_counter():
                    await asyncio.sleep(due - time.perf_counter())
            run.sent += 1
            retried = False
            while True:  # a connection lost (the service killed) is retried with the same id until it answers
                t0 = due if due is not None and not retried else time.perf_counter()
                try:
                    status, data = await conn.request("POST", "/v1/jobs", body)
                    break
                except (ConnectionError, OSError):
                    run.statuses["connection error"] = run.statuses.get("connection error", 0) + 1
                    retried = True
                    if time.perf_counter() > t_end:
                        return
                    await asyncio.sleep(0.1)
            key = f"{status} after a lost connection" if retried and status == 409 else str(status)
            run.statuses[key] = run.statuses.get(key, 0) + 1
            if 200 <= status < 300:
                run.latencies.append(time.perf_counter() - t0)
                run.acked.add(f"{prefix}{i}")
                src = json.loads(data).get("source", "?")
                run.sources[src] = run.sources.get(src, 0) + 1
                if on_progress is not None:
                    on_progress(len(run.acked))
        conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return run, time.perf_counter() - start


async def stored_ids(port: int, token: str) -> set[str]:
    conn = Conn(port, token)
    ids: set[str] = set()
    after = ""
    while True:
        status, data = await conn.request("GET", "/v1/jobs?limit=10000" + (f"&after={after}" if after else ""))
        if status != 200:
            raise RuntimeError(f"GET /v1/jobs: {status} {data[:200]!r}")
        page = [j["id"] for j in json.loads(data)["jobs"]]
        ids.update(page)
        if len(page) < 10000:
            conn.close()
            return ids
        after = page[-1]


async def metrics(port: int) -> dict[str, float]:
    conn = Conn(port, "")
    _, data = await conn.request("GET", "/metrics")
    conn.close()
    out = {}
    for line in data.decode().splitlines():
        if line.startswith(("schedmate_events_total", "schedmate_llm_calls_total", "schedmate_db_")):
            k, _, v = line.rpartition(" ")
            out[k] = float(v)
    return out


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--rate", type=float, default=None,
                    help="offered submissions per second (open loop); default: closed loop, as fast as answered")
    ap.add_argument("--warm", type=int, default=1000, help="finished jobs put in the history first")
    ap.add_argument("--llm", action="store_true", help="serve with --llm (SCHEDMATE_LLM_* from the environment)")
    ap.add_argument("--kill-at", type=float, default=None, help="kill -9 the service at this fraction acked")
    ap.add_argument("--stop-llm-at", type=float, default=None,
                    help="start our own llama.cpp server and stop it at this fraction acked (implies --llm)")
    ap.add_argument("--llm-port", type=int, default=8111)
    ap.add_argument("--durability", default="full", choices=["full", "normal"])
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument("--no-workdirs", action="store_true", help="command-only jobs")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from schedmate.service.auth import create_token
    from schedmate.service.db import Store

    tmp = Path(tempfile.mkdtemp(prefix="schedmate-bench-"))
    db = tmp / "service.sqlite"
    store = Store(str(db))
    token = create_token(store, "bench", ["submit", "read"])
    store.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    llm_proc = None
    if args.stop_llm_at is not None:
        args.llm = True
        llm_proc = start_llm(args.llm_port, tmp)
        env |= {"SCHEDMATE_LLM_BASE_URL": f"http://127.0.0.1:{args.llm_port}/v1"}
    workdirs = [] if args.no_workdirs else sorted(p for p in JOBS.iterdir() if p.is_dir())
    svc = Service(db, free_port(), args.llm, args.durability, env)
    svc.start()
    try:
        result = asyncio.run(bench(args, svc, token, workdirs, llm_proc))
    finally:
        svc.stop()
        if llm_proc is not None and llm_proc.poll() is None:
            os.killpg(llm_proc.pid, signal.SIGKILL)
    result |= {"requests": args.requests, "clients": args.clients, "offered_rate": args.rate, "llm": args.llm, "durability": args.durability,
               "kill_at": args.kill_at, "stop_llm_at": args.stop_llm_at, "workdir_share": 0 if args.no_workdirs else 0.1,
               "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M")}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0 if result["lost"] == 0 else 1


def start_llm(port: int, tmp: Path, model: str | None = None) -> subprocess.Popen[bytes]:
    """A llama.cpp server of our own (the project's model, one thread), so stopping it hurts nobody else."""
    from schedmate.llm import serving

    if model is None:
        state = serving.running_server("llamacpp")
        model = state.model_path if state else str(serving.pull())
    cmd = serving.server_command("llamacpp", Path(model), port)
    cmd[cmd.index("--n_threads") + 1] = cmd[cmd.index("--n_threads_batch") + 1] = "1"
    proc = subprocess.Popen(cmd, stdout=open(tmp / "llm.log", "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115
                            start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and serving.list_models(f"http://127.0.0.1:{port}/v1") is None:
        if proc.poll() is not None:
            raise RuntimeError(f"the model server exited; see {tmp / 'llm.log'}")
        time.sleep(0.5)
    return proc


async def bench(args: argparse.Namespace, svc: Service, token: str, workdirs: list[Path],
                llm_proc: subprocess.Popen[bytes] | None) -> dict[str, Any]:
    # history: warm-up jobs submitted and finished (not measured)
    warm, _ = await load(svc.port, token, args.warm, 20, "w", [], args.max_seconds)
    conn = Conn(svc.port, token)
    for k, jid in enumerate(sorted(warm.acked)):
        await conn.request("POST", f"/v1/jobs/{jid}/finish", json.dumps({"runtime_s": 600 + 37 * (k % 97)}).encode())
    conn.close()

    events: dict[str, Any] = {}

    def progress(acked: int) -> None:
        if args.kill_at is not None and "killed_at" not in events and acked >= args.kill_at * args.requests:
            events["killed_at"] = acked
            svc.kill()
            events["restart"] = asyncio.get_running_loop().run_in_executor(None, svc.start)
        if llm_proc is not None and "llm_stopped_at" not in events and acked >= args.stop_llm_at * args.requests:
            events["llm_stopped_at"] = acked
            os.killpg(llm_proc.pid, signal.SIGKILL)

    cpu0 = svc.cpu_seconds()
    run, elapsed = await load(svc.port, token, args.requests, args.clients, "b", workdirs, args.max_seconds, progress,
                              args.rate)
    cpu = svc.cpu_seconds() - cpu0 if "killed_at" not in events else float("nan")
    if "restart" in events:
        await events.pop("restart")
    stored = await stored_ids(svc.port, token)
    bench_ids = {i for i in stored if i.startswith("b")}
    m = await metrics(svc.port)
    return {
        "acked": len(run.acked), "sent": run.sent, "seconds": round(elapsed, 2),
        "throughput_per_s": round(len(run.acked) / elapsed, 1),
        "p50_ms": round(pct(run.latencies, 0.5) * 1000, 1), "p99_ms": round(pct(run.latencies, 0.99) * 1000, 1),
        "max_ms": round(max(run.latencies, default=float("nan")) * 1000, 1),
        "service_cpu_ms_per_request": round(cpu * 1000 / max(1, len(run.acked)), 3),
        "statuses": run.statuses, "sources": run.sources,
        "stored": len(bench_ids), "lost": len(run.acked - bench_ids),
        "stored_not_acked": len(bench_ids - run.acked), **{k: v for k, v in events.items()},
        "metrics": m,
    }


if __name__ == "__main__":
    raise SystemExit(main())
