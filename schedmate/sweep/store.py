"""Where a sweep's results live, written so that a `kill -9` at any moment loses no finished cell.

    SWEEP_DIR/
      grid.json                  the grid(s) last run here (for the record)
      parts/<cell key>.parquet   one row per finished cell: the commit record of that cell
      failed/<cell key>.json     a failed cell: its row, error and traceback (until it succeeds)
      tables/<name>/<key>.parquet  side tables from a `collect` hook, per cell
      results.parquet            all cells of the grid in grid order (ok and failed), rebuilt by `consolidate`
      <name>.parquet             each side table, consolidated

Every file is written to a temporary name in the same directory, flushed to disk and renamed over its
final name (`os.replace`, atomic on POSIX): a reader sees the whole file or none of it. A cell's side
tables are written before its row part, so a cell whose part exists is complete; a killed sweep leaves
at most some `.tmp` files (removed on the next open) and the cells that were running, which rerun.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from schedmate.sweep.cell import CellOutcome
from schedmate.sweep.grid import SweepCell, SweepGrid

RESULTS = "results.parquet"


def _atomic_write(path: Path, write: Any) -> None:
    """Call `write(file)` on a temporary file beside `path`, sync it, and rename it to `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    _atomic_write(path, lambda f: df.to_parquet(f, index=False))


class SweepBusy(RuntimeError):
    """Another sweep is writing to the same directory."""


class SweepStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.parts = self.root / "parts"
        self.failures = self.root / "failed"
        self.tables = self.root / "tables"
        self._lock: Any = None

    def open_for_writing(self) -> SweepStore:
        """Create the directories, take the directory's lock (one writing sweep at a time; the lock goes
        with the process, so a killed sweep leaves none) and remove writes cut short by a kill."""
        import fcntl

        for d in (self.parts, self.failures, self.tables):
            d.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.root / ".lock", "w")  # noqa: SIM115 - held for the sweep's lifetime
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise SweepBusy(f"{self.root}: another sweep is running in this directory") from None
        for stale in self.root.rglob(".*.tmp"):  # a write cut short by a kill: never a finished cell
            stale.unlink(missing_ok=True)
        return self

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def finished(self) -> set[str]:
        """Keys of the cells that finished successfully."""
        return {p.stem for p in self.parts.glob("*.parquet")} if self.parts.is_dir() else set()

    def failed(self) -> dict[str, str]:
        """key -> error of the cells whose last run failed."""
        out: dict[str, str] = {}
        if not self.failures.is_dir():
            return out
        for p in self.failures.glob("*.json"):
            out[p.stem] = json.loads(p.read_text()).get("error", "")
        return out

    def save_grids(self, grids: list[SweepGrid]) -> None:
        text = json.dumps([g.model_dump(mode="json") for g in grids], indent=2).encode()
        _atomic_write(self.root / "grid.json", lambda f: f.write(text))

    def record(self, outcome: CellOutcome) -> None:
        """Store one cell's outcome (the driver calls this as each cell finishes)."""
        if outcome.status == "failed":
            text = outcome.model_dump_json(indent=2).encode()
            _atomic_write(self.failures / f"{outcome.key}.json", lambda f: f.write(text))
            return
        for name, rows in outcome.tables.items():
            d = self.tables / name
            d.mkdir(exist_ok=True)
            write_parquet(pd.DataFrame(rows), d / f"{outcome.key}.parquet")
        write_parquet(pd.DataFrame([outcome.row]), self.parts / f"{outcome.key}.parquet")
        (self.failures / f"{outcome.key}.json").unlink(missing_ok=True)

    def rows(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored rows (ok and failed) of `keys` in that order (default: every stored cell)."""
        ok, failed = self.finished(), self.failed()
        order = list(keys) if keys is not None else sorted(ok | set(failed))
        frames = []
        for k in order:
            if k in ok:
                frames.append(pd.read_parquet(self.parts / f"{k}.parquet"))
            elif k in failed:
                frames.append(pd.DataFrame([json.loads((self.failures / f"{k}.json").read_text())["row"]]))
        columns = list(dict.fromkeys(c for f in frames for c in f.columns))
        frames = [f.dropna(axis=1, how="all") for f in frames]  # all-null columns carry no type to merge
        return pd.concat(frames, ignore_index=True).reindex(columns=columns) if frames else pd.DataFrame()

    def consolidate(self, cells: list[SweepCell]) -> Path:
        """Write `results.parquet` (the grid's cells in grid order) and each side table; returns its path."""
        keys = [c.key for c in cells]
        write_parquet(self.rows(keys), self.root / RESULTS)
        wanted = set(keys)
        for d in sorted(p for p in self.tables.iterdir() if p.is_dir()) if self.tables.is_dir() else []:
            parts = [pd.read_parquet(p) for p in sorted(d.glob("*.parquet")) if p.stem in wanted]
            if parts:
                write_parquet(pd.concat(parts, ignore_index=True), self.root / f"{d.name}.parquet")
        return self.root / RESULTS


def load_table(path: Path) -> pd.DataFrame:
    """A sweep's table from `results.parquet`, any Parquet file, or a sweep directory (its consolidated
    table, or the rows stored so far when cells finished after it: a sweep running or interrupted)."""
    path = Path(path)
    if path.is_dir():
        store, results = SweepStore(path), path / RESULTS
        newest = max((p.stat().st_mtime for p in store.parts.glob("*.parquet")), default=None) \
            if store.parts.is_dir() else None
        if results.exists() and (newest is None or newest <= results.stat().st_mtime):
            return pd.read_parquet(results)
        if newest is not None:  # a sweep running or interrupted since its last consolidation
            return store.rows()
        raise FileNotFoundError(f"{path}: neither {RESULTS} nor parts/ (not a sweep directory)")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    return pd.read_parquet(path)
