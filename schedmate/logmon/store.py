"""Learned rules per log family, in SQLite under `$SCHEDMATE_HOME/cache/logrules.sqlite`.

A log *family* is the set of jobs whose logs start the same way: its fingerprint hashes the shapes of the
first lines (digits masked, whitespace collapsed), so two runs of one training script share a family and
its learned rules. Rules learned for one family are also offered to others (checked on the line first)
before any LLM call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from pathlib import Path

from schedmate.logmon.rules import Rule

_DIGITS = re.compile(r"\d+")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_WS = re.compile(r"\s+")


def schedmate_home() -> Path:
    return Path(os.environ.get("SCHEDMATE_HOME") or Path.home() / ".schedmate")


def template_of(text: str) -> str:
    """The shape of a line: hex and digit runs masked to `0`, whitespace collapsed."""
    return _WS.sub(" ", _DIGITS.sub("0", _HEX.sub("0", text))).strip()


def family_fingerprint(lines: list[str], k: int = 8) -> str:
    shapes = [template_of(t) for t in lines if t.strip()][:k]
    return hashlib.sha1("\n".join(shapes).encode("utf-8", "replace")).hexdigest()[:16]


class RuleStore:
    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else schedmate_home() / "cache" / "logrules.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS rules (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                family TEXT NOT NULL, name TEXT NOT NULL, pattern TEXT NOT NULL, kind TEXT NOT NULL,
                needles TEXT NOT NULL, cause TEXT, source TEXT NOT NULL, created_at REAL NOT NULL,
                UNIQUE (family, pattern));
            CREATE TABLE IF NOT EXISTS error_lines (
                line TEXT PRIMARY KEY, category TEXT NOT NULL, created_at REAL NOT NULL);
            """
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _rule(row: tuple) -> Rule:
        name, pattern, kind, needles, cause, source = row
        return Rule(name=name, pattern=pattern, kind=kind, needles=tuple(json.loads(needles)), cause=cause,
                    source=source)

    def rules_for(self, family: str) -> list[Rule]:
        rows = self._db.execute(
            "SELECT name, pattern, kind, needles, cause, source FROM rules WHERE family = ? ORDER BY id", (family,)
        ).fetchall()
        return [self._rule(r) for r in rows]

    def all_rules(self, exclude_family: str | None = None) -> list[tuple[str, Rule]]:
        rows = self._db.execute(
            "SELECT family, name, pattern, kind, needles, cause, source FROM rules WHERE family != ? ORDER BY id",
            (exclude_family or "",),
        ).fetchall()
        return [(r[0], self._rule(r[1:])) for r in rows]

    def add_rule(self, family: str, rule: Rule) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO rules (family, name, pattern, kind, needles, cause, source, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (family, rule.name, rule.pattern, rule.kind, json.dumps(list(rule.needles)), rule.cause, rule.source,
             time.time()),
        )
        self._db.commit()

    def add_error_line(self, line: str, category: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO error_lines (line, category, created_at) VALUES (?, ?, ?)",
                         (line[:2000], category, time.time()))
        self._db.commit()

    def error_lines(self, limit: int = 2000) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT line FROM error_lines ORDER BY created_at DESC LIMIT ?",
                                               (limit,))]
