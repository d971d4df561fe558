"""The service's store: every accepted request and every annotation, in SQLite (WAL) or PostgreSQL.

Tables (SQLAlchemy Core, versioned by `schema_version`; `migrate()` brings any older database forward):
`clients` (token hash, scopes), `jobs` (the submitted request, state), `annotations` (every annotation
made, with its source: static, llm or log), `log_chunks` (what `POST /v1/jobs/{id}/log` appended).

A write that the database refuses (read-only file, full disk) raises `StoreUnavailable`, which the API turns
into 503 with the database's own message; nothing already stored is touched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, OperationalError

META = MetaData()
SCHEMA = Table("schema_version", META, Column("version", Integer, nullable=False))
CLIENTS = Table(
    "clients", META,
    Column("name", String(128), primary_key=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("scopes", String(128), nullable=False),
    Column("created", Float, nullable=False),
)
JOBS = Table(
    "jobs", META,
    Column("id", String(256), primary_key=True),
    Column("client", String(128), nullable=False),
    Column("state", String(16), nullable=False),
    Column("request", Text, nullable=False),
    Column("created", Float, nullable=False),
    Column("updated", Float, nullable=False),
    Column("log_bytes", Integer, nullable=False, default=0),
)
ANNOTATIONS = Table(
    "annotations", META,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("job_id", String(256), ForeignKey("jobs.id"), nullable=False, index=True),
    Column("made", Float, nullable=False),
    Column("source", String(16), nullable=False),
    Column("body", Text, nullable=False),
)
LOG_CHUNKS = Table(
    "log_chunks", META,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("job_id", String(256), ForeignKey("jobs.id"), nullable=False, index=True),
    Column("text", Text, nullable=False),
)

Migration = Callable[[Connection], None]
MIGRATIONS: list[Migration] = [
    lambda c: META.create_all(c),  # 1: the tables above
]
"""Ordered; entry k brings a database at version k to version k+1. Append, never edit."""


class StoreUnavailable(RuntimeError):
    """The database refused a write or a read (read-only, disk full, locked too long)."""


class DuplicateJob(ValueError):
    pass


def connect(url: str) -> Engine:
    """An engine for a SQLite path/URL (WAL, foreign keys) or any SQLAlchemy URL (PostgreSQL)."""
    if "://" not in url:
        url = f"sqlite:///{url}"
    sqlite = url.startswith("sqlite")
    engine = create_engine(url, future=True, pool_pre_ping=not sqlite,
                           connect_args={"timeout": 10, "check_same_thread": False} if sqlite else {})
    if sqlite:
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _: Any) -> None:
            cur = dbapi_conn.cursor()
            try:
                cur.execute("PRAGMA journal_mode=WAL")
            except Exception:  # noqa: BLE001 - a read-only file cannot switch modes; reads still work
                pass
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()
    return engine


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = connect(url)
        self.migrate()

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as c:
                yield c
        except OperationalError as e:
            raise StoreUnavailable(str(e.orig) if e.orig is not None else str(e)) from e

    def migrate(self) -> int:
        with self._tx() as c:
            SCHEMA.create(c, checkfirst=True)
            row = c.execute(select(SCHEMA.c.version)).first()
            version = row[0] if row else 0
            for step in MIGRATIONS[version:]:
                step(c)
            if row is None:
                c.execute(SCHEMA.insert().values(version=len(MIGRATIONS)))
            elif version < len(MIGRATIONS):
                c.execute(SCHEMA.update().values(version=len(MIGRATIONS)))
        return len(MIGRATIONS)

    # ------------------------------------------------------------------ clients
    def add_client(self, name: str, token_sha256: str, scopes: list[str]) -> None:
        try:
            with self._tx() as c:
                c.execute(CLIENTS.insert().values(name=name, token_sha256=token_sha256, scopes=",".join(scopes),
                                                  created=time.time()))
        except IntegrityError as e:
            raise ValueError(f"a client named {name!r} exists already") from e

    def client_by_token(self, token_sha256: str) -> tuple[str, set[str]] | None:
        with self._tx() as c:
            row = c.execute(select(CLIENTS.c.name, CLIENTS.c.scopes)
                            .where(CLIENTS.c.token_sha256 == token_sha256)).first()
        return (row[0], set(row[1].split(","))) if row else None

    # ------------------------------------------------------------------ jobs
    def add_job(self, job_id: str, client: str, request: dict[str, Any], annotation: dict[str, Any],
                source: str) -> None:
        """The request and its first annotation, in one transaction (both or neither)."""
        now = time.time()
        try:
            with self._tx() as c:
                c.execute(JOBS.insert().values(id=job_id, client=client, state="submitted",
                                               request=json.dumps(request), created=now, updated=now, log_bytes=0))
                c.execute(ANNOTATIONS.insert().values(job_id=job_id, made=now, source=source,
                                                      body=json.dumps(annotation)))
        except IntegrityError as e:
            raise DuplicateJob(f"job {job_id!r} was submitted already") from e

    def add_annotation(self, job_id: str, annotation: dict[str, Any], source: str, state: str | None = None) -> None:
        now = time.time()
        with self._tx() as c:
            c.execute(ANNOTATIONS.insert().values(job_id=job_id, made=now, source=source, body=json.dumps(annotation)))
            values: dict[str, Any] = {"updated": now}
            if state:
                values["state"] = state
            c.execute(JOBS.update().where(JOBS.c.id == job_id).values(**values))

    def append_log(self, job_id: str, text: str) -> int:
        """Store a log chunk; returns the job's log size in bytes after it."""
        with self._tx() as c:
            size = c.execute(select(JOBS.c.log_bytes).where(JOBS.c.id == job_id)).scalar_one()
            c.execute(LOG_CHUNKS.insert().values(job_id=job_id, text=text))
            size += len(text.encode())
            c.execute(JOBS.update().where(JOBS.c.id == job_id).values(log_bytes=size, state="running",
                                                                      updated=time.time()))
        return int(size)

    def log_text(self, job_id: str) -> str:
        with self._tx() as c:
            return "".join(r[0] for r in c.execute(select(LOG_CHUNKS.c.text).where(LOG_CHUNKS.c.job_id == job_id)
                                                   .order_by(LOG_CHUNKS.c.seq)))

    def job(self, job_id: str) -> dict[str, Any] | None:
        with self._tx() as c:
            row = c.execute(select(JOBS).where(JOBS.c.id == job_id)).mappings().first()
            if row is None:
                return None
            ann = c.execute(select(ANNOTATIONS.c.body, ANNOTATIONS.c.source, ANNOTATIONS.c.made)
                            .where(ANNOTATIONS.c.job_id == job_id).order_by(ANNOTATIONS.c.seq.desc())).first()
        return {"id": row["id"], "client": row["client"], "state": row["state"],
                "request": json.loads(row["request"]), "log_bytes": row["log_bytes"],
                "annotation": json.loads(ann[0]) if ann else None, "source": ann[1] if ann else None,
                "annotated_at": ann[2] if ann else None}

    def jobs(self, state: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        q = select(JOBS.c.id, JOBS.c.state, JOBS.c.client, JOBS.c.updated).order_by(JOBS.c.created).limit(limit)
        if state:
            q = q.where(JOBS.c.state == state)
        with self._tx() as c:
            return [dict(r) for r in c.execute(q).mappings()]

    def finished_requests(self) -> list[dict[str, Any]]:
        """Requests of finished jobs with their finish record (to rebuild the history store)."""
        with self._tx() as c:
            rows = c.execute(select(JOBS.c.request, ANNOTATIONS.c.body).join(ANNOTATIONS)
                             .where(JOBS.c.state == "finished", ANNOTATIONS.c.source == "finish")
                             .order_by(JOBS.c.updated)).all()
        return [{"request": json.loads(r[0]), "finish": json.loads(r[1])} for r in rows]

    def counts(self) -> dict[str, int]:
        with self._tx() as c:
            jobs = c.execute(select(func.count()).select_from(JOBS)).scalar_one()
            anns = c.execute(select(func.count()).select_from(ANNOTATIONS)).scalar_one()
        return {"jobs": int(jobs), "annotations": int(anns)}
