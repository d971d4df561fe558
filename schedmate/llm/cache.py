"""Disk cache of validated LLM answers: SQLite (stdlib), WAL mode, safe for concurrent processes.

The key is the sha256 of a canonical JSON of everything that decides the answer: prompt id and version,
rendered messages, model, decoding params, output schema and the server dialect (`cache_key`). Only
deterministic calls are stored (temperature 0, or an explicit seed): the client decides, see
`is_cacheable`. Only answers that validated against the schema are stored.

Failures never break a call: an unreadable database, a locked one past the busy timeout or a corrupt row is
treated as a miss (and logged), a failed write is logged and dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    prompt_id TEXT,
    model TEXT,
    created REAL NOT NULL
)
"""


def cache_key(**parts: Any) -> str:
    """sha256 of the canonical JSON of `parts` (keys sorted, no whitespace)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def is_cacheable(temperature: float, seed: int | None) -> bool:
    """Greedy calls are cacheable; sampled ones only with an explicit seed."""
    return temperature == 0 or seed is not None


class LLMCache:
    """`get(key) -> dict | None`, `put(key, value)`; one short-lived connection per operation."""

    def __init__(self, path: Path | str, busy_timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        if not self._ready:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            self._ready = True
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            conn = self._connect()
            try:
                row = conn.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            finally:
                conn.close()
        except sqlite3.Error as e:
            log.warning("LLM cache %s unreadable (%s): treated as a miss", self.path, e)
            return None
        if row is None:
            return None
        try:
            value = json.loads(row[0])
            if not isinstance(value, dict):
                raise TypeError(f"expected a JSON object, got {type(value).__name__}")
            return value
        except (TypeError, ValueError) as e:
            log.warning("LLM cache %s: corrupt row %s… (%s): treated as a miss", self.path, key[:12], e)
            return None

    def put(self, key: str, value: dict[str, Any], prompt_id: str | None = None, model: str | None = None) -> None:
        try:
            conn = self._connect()
            try:
                conn.execute(
                    "INSERT OR REPLACE INTO answers (key, value, prompt_id, model, created) VALUES (?, ?, ?, ?, ?)",
                    (key, json.dumps(value), prompt_id, model, time.time()),
                )
            finally:
                conn.close()
        except sqlite3.Error as e:
            log.warning("LLM cache %s: write failed (%s): answer not cached", self.path, e)

    def delete(self, key: str) -> None:
        try:
            conn = self._connect()
            try:
                conn.execute("DELETE FROM answers WHERE key = ?", (key,))
            finally:
                conn.close()
        except sqlite3.Error as e:
            log.warning("LLM cache %s: delete failed (%s)", self.path, e)

    def __len__(self) -> int:
        try:
            conn = self._connect()
            try:
                return int(conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.Error:
            return 0
