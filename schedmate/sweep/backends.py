"""Where cells run: Ray tasks (local or an existing cluster), a local process pool, or this process.

Every backend has the same two calls: `submit(cell) -> handle` and `wait(handles) -> [(handle,
outcome)]` (at least one finished cell, or none after `timeout` seconds). The driver decides how many
cells are in flight, so `--workers` holds on every backend, even on a Ray cluster with more CPUs.
A worker that dies (killed, out of memory) fails its cell with that error; the sweep goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from schedmate.sweep.cell import CellOutcome, run_cell
from schedmate.sweep.grid import SweepCell

OBJECT_STORE_BYTES = 256 * 1024**2
"""A local Ray instance's object store: cells send back one small row each, so 256 MiB is plenty."""


def _crashed(cell: SweepCell, error: str) -> CellOutcome:
    return CellOutcome(key=cell.key, status="failed", error=error,
                       row={**cell.params(), "status": "failed", "error": error})


class Backend(Protocol):
    name: str
    description: str

    def submit(self, cell: SweepCell) -> Any: ...

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, CellOutcome]]: ...

    def close(self) -> None: ...


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _code_path() -> str:
    """The directory holding the `schedmate` package (and `eval/`, `adapters/` in a checkout)."""
    return str(Path(__file__).resolve().parents[2])


class RayBackend:
    """Each cell a Ray task (`num_cpus=1`, no retries: a failed cell is recorded, not rerun behind the
    driver's back). `address=None` starts a local instance with `workers` CPUs and no dashboard;
    otherwise connects to that cluster (`auto`, `HOST:PORT` or `ray://HOST:PORT`), whose nodes must
    have schedmate installed (and the traces at the same paths)."""

    name = "ray"

    def __init__(self, workers: int, address: str | None = None) -> None:
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started and address is None:
            # Local workers inherit this process's environment (SCHEDMATE_*, the LLM server's address) and
            # import this checkout whatever their working directory. (A `runtime_env` would do the same at
            # twice the start-up cost of a worker.)
            saved = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_code_path(), saved) if p)
            try:
                ray.init(num_cpus=workers, include_dashboard=False, object_store_memory=OBJECT_STORE_BYTES,
                         log_to_driver=False, configure_logging=False)
            finally:
                if saved is None:
                    del os.environ["PYTHONPATH"]
                else:
                    os.environ["PYTHONPATH"] = saved
        elif self._started:
            env = {k: v for k, v in os.environ.items() if k.startswith("SCHEDMATE_")}
            try:
                ray.init(address=address, log_to_driver=False, configure_logging=False,
                         runtime_env={"env_vars": env} if env else None)
            except (ConnectionError, RuntimeError, ValueError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ValueError(f"--address {address}: cannot connect to the Ray cluster: {first}") from None
        cpus = int(ray.cluster_resources().get("CPU", 0))
        where = "a local Ray instance" if address is None else f"the Ray cluster at {address}"
        self.description = f"Ray: {where} ({cpus} CPUs), {workers} cells at a time"
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_cell)
        self._cells: dict[Any, SweepCell] = {}

    def submit(self, cell: SweepCell) -> Any:
        ref = self._task.remote(cell)
        self._cells[ref] = cell
        return ref

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, CellOutcome]]:
        ready, _ = self._ray.wait(handles, num_returns=1, timeout=timeout)
        out = []
        for ref in ready:
            cell = self._cells.pop(ref)
            try:
                out.append((ref, self._ray.get(ref)))
            except Exception as e:  # noqa: BLE001 - a worker that died: the cell fails with Ray's reason
                out.append((ref, _crashed(cell, f"worker died: {type(e).__name__}: {str(e).splitlines()[0]}")))
        return out

    def close(self) -> None:
        for ref in self._cells:
            self._ray.cancel(ref, force=True)
        if self._started:
            self._ray.shutdown()


class PoolBackend:
    """A local process pool (`spawn`: each worker a fresh interpreter, as a Ray worker is). A worker
    that dies breaks a Python pool: its in-flight cells fail and a new pool takes the rest."""

    name = "pool"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.description = f"a local process pool of {workers} worker(s)"
        self._pool = self._new_pool()
        self._cells: dict[Future, SweepCell] = {}

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, cell: SweepCell) -> Any:
        fut = self._pool.submit(run_cell, cell)
        self._cells[fut] = cell
        return fut

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, CellOutcome]]:
        done, _ = futures_wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        out = []
        broken = False
        for fut in done:
            cell = self._cells.pop(fut)
            try:
                out.append((fut, fut.result()))
            except BrokenProcessPool as e:
                broken = True
                out.append((fut, _crashed(cell, f"worker died: {e}")))
        if broken:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class SerialBackend:
    """Cells run one by one in this process (for debugging, or cells that must share it)."""

    name = "serial"
    description = "this process, one cell at a time"

    def __init__(self) -> None:
        self._queue: list[tuple[int, SweepCell]] = []
        self._n = 0

    def submit(self, cell: SweepCell) -> Any:
        self._n += 1
        self._queue.append((self._n, cell))
        return self._n

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, CellOutcome]]:
        handle, cell = self._queue.pop(0)
        return [(handle, run_cell(cell))]

    def close(self) -> None:
        self._queue.clear()


BACKENDS = ("auto", "ray", "pool", "serial")


def make_backend(kind: str, workers: int, address: str | None = None) -> Backend:
    """`auto`: Ray when it is installed, else the process pool (saying so on stderr)."""
    if kind not in BACKENDS:
        raise ValueError(f"backend: unknown {kind!r} (known: {', '.join(BACKENDS)})")
    if workers < 1:
        raise ValueError(f"workers: must be at least 1, got {workers}")
    if address is not None and kind not in ("auto", "ray"):
        raise ValueError(f"--address is a Ray cluster's address; it makes no sense with backend {kind!r}")
    if kind == "auto":
        if ray_available():
            kind = "ray"
        elif address is not None:
            raise ValueError("--address needs Ray: pip install 'schedmate[sweep]'")
        else:
            print("Ray is not installed (pip install 'schedmate[sweep]'): running cells in a local process pool",
                  file=sys.stderr)
            kind = "pool"
    if kind == "ray":
        if not ray_available():
            raise ValueError("backend ray: Ray is not installed (pip install 'schedmate[sweep]')")
        return RayBackend(workers, address)
    if kind == "pool":
        return PoolBackend(workers)
    return SerialBackend()
