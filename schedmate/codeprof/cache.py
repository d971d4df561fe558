"""Version cache: a resubmitted or lightly edited job reuses its previous profile.

SQLite at `$SCHEDMATE_HOME/cache/codeprof.sqlite` (default `~/.schedmate`), two tables:

* `py_summaries(sha256 -> AST summary)`: a Python file is parsed once per content; an edit re-parses only
  the edited file.
* `profiles(job key -> files read with their sha256, facts with their evidence files, LLM answers with the
  files their excerpt came from, the finished profile)`. The job key is the workdir's real path, the
  command, the environment, the launcher config and the analysis mode (LLM on/off, prompt version, model,
  samples, seed).

On a resubmission every recorded file is hashed again. Nothing changed: the stored profile is returned
as is (no parsing, no LLM call). Something changed: the static pass runs again (re-parsing only changed
Python files), LLM answers are reused for every field whose excerpt files are unchanged and asked again
only for the others; `derived.recomputed_fields` lists the fields whose evidence touched a changed file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from schedmate.codeprof.facts import CodeProfile, Fact
from schedmate.codeprof.pyast import analyze_python
from schedmate.codeprof.reader import MAX_FILE_BYTES, Workdir, sha256_file

SCHEMA_VERSION = "1"


def _code_version() -> str:
    """Hash of the analyzer's own source and prompts: a changed analyzer never reuses old profiles."""
    h = hashlib.sha256(SCHEMA_VERSION.encode())
    here = Path(__file__).resolve().parent
    for p in sorted(here.rglob("*.py")):
        h.update(str(p.relative_to(here)).encode())
        h.update(p.name.encode())
        h.update(p.read_bytes())
    for p in sorted((here.parents[1] / "prompts").glob("code_profile*.md")):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


CODE_VERSION = _code_version()


def default_cache_path() -> Path:
    home = Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser()
    return home / "cache" / "codeprof.sqlite"


class VersionCache:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._conn() as c:
            c.execute(
                "CREATE TABLE IF NOT EXISTS py_summaries (sha256 TEXT PRIMARY KEY, summary TEXT NOT NULL)"
            )
            c.execute(
                "CREATE TABLE IF NOT EXISTS profiles (job_key TEXT PRIMARY KEY, files TEXT NOT NULL, "
                "facts TEXT NOT NULL, llm TEXT NOT NULL, profile TEXT NOT NULL, created REAL NOT NULL)"
            )
        self.parsed = 0
        self.parse_hits = 0

    def _conn(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    # -------------------------------------------------------------- parse cache
    def py_summary(self, rel: str, text: str) -> dict[str, Any]:
        sha = hashlib.sha256((CODE_VERSION + text).encode()).hexdigest()
        with self._lock, self._conn() as c:
            row = c.execute("SELECT summary FROM py_summaries WHERE sha256=?", (sha,)).fetchone()
        if row:
            self.parse_hits += 1
            return json.loads(row[0])
        summary = analyze_python(text)  # SyntaxError propagates: the static pass reports it
        self.parsed += 1
        with self._lock, self._conn() as c:
            c.execute("INSERT OR REPLACE INTO py_summaries VALUES (?, ?)", (sha, json.dumps(summary)))
        return summary

    # -------------------------------------------------------------- profiles
    @staticmethod
    def job_key(
        workdir: Path, command: str, env: dict[str, str], launcher_config: str | None, mode: dict[str, Any]
    ) -> str:
        blob = json.dumps(
            {
                "v": CODE_VERSION,
                "wd": str(Path(workdir).resolve()),
                "cmd": command,
                "env": env,
                "lc": launcher_config,
                "mode": mode,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def _load(self, key: str) -> dict[str, Any] | None:
        with self._lock, self._conn() as c:
            row = c.execute(
                "SELECT files, facts, llm, profile FROM profiles WHERE job_key=?", (key,)
            ).fetchone()
        if row is None:
            return None
        return {
            "files": json.loads(row[0]),
            "facts": json.loads(row[1]),
            "llm": json.loads(row[2]),
            "profile": json.loads(row[3]),
        }

    def _store(
        self,
        key: str,
        files: dict[str, str],
        facts: dict[str, Any],
        llm: dict[str, Any],
        profile: CodeProfile,
    ) -> None:
        with self._lock, self._conn() as c:
            c.execute(
                "INSERT OR REPLACE INTO profiles VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    json.dumps(files),
                    json.dumps(facts),
                    json.dumps(llm),
                    profile.model_dump_json(),
                    time.time(),
                ),
            )

    def analyze(
        self,
        workdir: str | Path,
        command: str | None = None,
        env: dict[str, str] | None = None,
        launcher_config: str | None = None,
        use_llm: bool = True,
        client: Any = None,
        samples: int = 1,
        seed: int | None = None,
        prompt_version: str | None = None,
        tool_budget: int = 0,
        candidates: bool = True,
    ) -> CodeProfile:
        from schedmate.codeprof.analyzer import finish, job_command, job_env
        from schedmate.codeprof.static import run_static

        t0 = time.perf_counter()
        root = Path(workdir).resolve()
        cmd = job_command(root, command)
        envd = job_env(root, env)
        model = getattr(getattr(client, "config", None), "model", None) if client is not None else None
        mode = {
            "llm": use_llm,
            "prompt": prompt_version,
            "model": model,
            "samples": samples,
            "seed": seed,
            "tools": tool_budget,
            "candidates": candidates,
        }
        key = self.job_key(root, cmd, envd, launcher_config, mode)
        old = self._load(key)
        changed: list[str] = []
        if old is not None:
            for rel, sha in old["files"].items():
                p = root / rel
                if sha256_file(p, MAX_FILE_BYTES) != sha or (
                    p.is_symlink() and not str(p.resolve()).startswith(str(root))
                ):
                    changed.append(rel)
            if not changed:
                prof = CodeProfile.model_validate(old["profile"])
                prof.extras["cache"] = "hit"
                prof.extras["seconds"] = round(time.perf_counter() - t0, 4)
                prof.llm_calls = 0  # nothing was spent on this answer
                prof.extras["prompt_tokens"] = prof.extras["completion_tokens"] = 0
                return prof
        wd = Workdir(root)
        res = run_static(wd, cmd, envd, launcher_config, py_cache=self.py_summary)
        facts = dict(res.facts)
        warnings: list[str] = []
        calls = 0
        extra: dict[str, Any] = {"cache": "miss" if old is None else "partial", "changed_files": changed}
        llm_store: dict[str, Any] = {}
        if use_llm:
            from schedmate.codeprof.llmpass import LLMOutcome, open_fields, run_llm_pass

            want = open_fields(res, wd)
            reuse: dict[str, Fact] = {}
            if old is not None:
                for name in want:
                    rec = old["llm"].get(name)
                    if (
                        rec
                        and all(wd.hashes.get(f) == old["files"].get(f) for f in rec["deps"])
                        and not any(f in changed for f in rec["deps"])
                    ):
                        if rec["fact"] is not None:
                            reuse[name] = Fact.model_validate(rec["fact"])
                        llm_store[name] = rec
            ask = [n for n in want if n not in llm_store]
            outcome = (
                run_llm_pass(
                    res,
                    wd,
                    client=client,
                    samples=samples,
                    seed=seed,
                    prompt_version=prompt_version,
                    tool_budget=tool_budget,
                    fields=ask,
                )
                if ask
                else LLMOutcome()
            )
            deps = outcome.extras.get("context_files", [])
            for name in ask:
                f = outcome.answers.get(name)
                failed = any("call failed" in w or "skipped" in w for w in outcome.warnings)
                if not failed:
                    llm_store[name] = {"fact": f.model_dump() if f else None, "deps": deps}
            outcome.answers = {**reuse, **outcome.answers}
            facts = outcome.merged(facts)
            calls = outcome.calls
            warnings.extend(outcome.warnings)
            extra.update(outcome.extras)
            extra["llm_fields_reused"] = sorted(reuse)
        if old is not None:
            extra["recomputed_fields"] = sorted(
                k for k, f in facts.items() if any(e.split(":", 1)[0] in changed for e in f.evidence)
            )
        extra["seconds"] = round(time.perf_counter() - t0, 4)
        prof = finish(facts, res, wd, warnings, calls, extra, candidates=candidates)
        self._store(key, dict(wd.hashes), {k: v.model_dump() for k, v in facts.items()}, llm_store, prof)
        return prof
