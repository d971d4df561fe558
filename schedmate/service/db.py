"""The service's store: every accepted request and every annotation, in SQLite (WAL) or PostgreSQL.

Tables (SQLAlchemy Core; versioned by `schema_version`, see `MIGRATIONS`): `clients` (token hash, scopes),
`jobs` (the submitted request, state, where its log is read from), `annotations` (every annotation made,
with its source: static, llm, log or finish), `log_chunks` (what `POST /v1/jobs/{id}/log` appended).

**Writes go through one writer thread with group commit** (`Store.submit(op)`): the writer takes every
write waiting in its queue (up to `batch_max`), runs them in one transaction, commits, and only then
resolves each write's future. The API answers after that future, so an acknowledged request is committed:
SQLite in WAL mode with `synchronous=FULL` (the default `durability="full"`) has fsynced the WAL, so it
survives `kill -9` of the service and a power cut; `durability="normal"` survives `kill -9` only.
PostgreSQL commits are durable by its own defaults. A batch that fails is retried one write at a time, so
a bad write fails alone. Duplicate job ids are an `INSERT ... ON CONFLICT DO NOTHING` (no error, no abort).

A database that refuses a write (read-only file, full disk, locked too long) raises `StoreUnavailable`
with its own message, which the API turns into 503; nothing already stored is touched.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
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
    text,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

META = MetaData()
SCHEMA = Table("schema_version", META, Column("version", Integer, nullable=False))
CLIENTS = Table(
    "clients", META,
    Column("name", String(128), primary_key=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("scopes", String(128), nullable=False),
    Column("created", Float, nullable=False),
)


def _job_columns(version: int) -> list[Column]:
    cols = [
        Column("id", String(256), primary_key=True),
        Column("client", String(128), nullable=False),
        Column("state", String(16), nullable=False),
        Column("request", Text, nullable=False),
        Column("created", Float, nullable=False),
        Column("updated", Float, nullable=False),
        Column("log_bytes", Integer, nullable=False, default=0),
    ]
    if version >= 2:
        cols += [Column("log_path", Text, nullable=True),
                 Column("log_offset", Integer, nullable=False, default=0, server_default="0")]
    return cols


JOBS = Table("jobs", META, *_job_columns(2))
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
STATES = ("submitted", "running", "failed", "finished")

Migration = Callable[[Connection], None]


def _v1(c: Connection) -> None:
    """The first schema (jobs without the log-path columns)."""
    v1 = MetaData()
    Table("jobs", v1, *_job_columns(1))
    for t in (CLIENTS, ANNOTATIONS, LOG_CHUNKS):
        t.to_metadata(v1)
    v1.create_all(c)


def _v2(c: Connection) -> None:
    """Logs read by the service from a path under its roots: where, and how far it has read."""
    c.execute(text("ALTER TABLE jobs ADD COLUMN log_path TEXT"))
    c.execute(text("ALTER TABLE jobs ADD COLUMN log_offset INTEGER NOT NULL DEFAULT 0"))


MIGRATIONS: list[Migration] = [_v1, _v2]
"""Ordered; entry k brings a database at version k to version k+1, in one transaction with the version
bump. Append, never edit (a deployed database has run the old entries)."""


class StoreUnavailable(RuntimeError):
    """The database refused a write or a read (read-only, disk full, locked too long, server down)."""


def _reason(e: DBAPIError) -> str:
    return str(e.orig).strip() if e.orig is not None else str(e)


def connect(url: str, durability: str = "full") -> Engine:
    """An engine for a SQLite path/URL (WAL, foreign keys, `synchronous` from `durability`) or any
    SQLAlchemy URL (`postgresql+psycopg://...`)."""
    if durability not in ("full", "normal"):
        raise ValueError(f"durability must be full or normal, got {durability!r}")
    if "://" not in url:
        url = f"sqlite:///{url}"
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    sqlite = url.startswith("sqlite")
    engine = create_engine(url, pool_pre_ping=not sqlite,
                           connect_args={"timeout": 10, "check_same_thread": False} if sqlite else {})
    if sqlite:
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _: Any) -> None:
            cur = dbapi_conn.cursor()
            with contextlib.suppress(Exception):  # a read-only file cannot switch modes; reads still work
                cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA synchronous={durability.upper()}")
            cur.close()
    return engine


def _insert(dialect: str, table: Table) -> Any:
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


Op = Callable[[Connection], Any]
_STOP = object()


class Store:
    def __init__(self, url: str, durability: str = "full", batch_max: int = 512) -> None:
        self.url = url
        self.engine = connect(url, durability)
        self.dialect = self.engine.dialect.name
        self.batch_max = batch_max
        self.migrate()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.batches = 0
        self.batched_writes = 0

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as c:
                yield c
        except IntegrityError:
            raise
        except DBAPIError as e:
            raise StoreUnavailable(_reason(e)) from e

    def migrate(self) -> int:
        """Bring the database to the newest schema; returns its version."""
        with self._tx() as c:
            SCHEMA.create(c, checkfirst=True)
            row = c.execute(select(SCHEMA.c.version)).first()
            version = row[0] if row else 0
            if version > len(MIGRATIONS):
                raise StoreUnavailable(f"database schema version {version} is newer than this schedmate "
                                       f"({len(MIGRATIONS)}): upgrade schedmate")
            for step in MIGRATIONS[version:]:
                step(c)
            if row is None:
                c.execute(SCHEMA.insert().values(version=len(MIGRATIONS)))
            elif version < len(MIGRATIONS):
                c.execute(SCHEMA.update().values(version=len(MIGRATIONS)))
        return len(MIGRATIONS)

    def submit(self, op: Op) -> Future[Any]:
        """Queue a write for the writer thread; the future resolves after its transaction committed."""
        if self._writer is None:
            with self._start_lock:
                if self._writer is None:
                    self._writer = threading.Thread(target=self._write_loop, name="schedmate-db-writer",
                                                    daemon=True)
                    self._writer.start()
        fut: Future[Any] = Future()
        self._queue.put((op, fut))
        return fut

    def write(self, op: Op) -> Any:
        """`submit` and wait (for callers outside the event loop)."""
        return self.submit(op).result()

    def close(self) -> None:
        if self._writer is not None:
            self._queue.put(_STOP)
            self._writer.join(timeout=30)
            self._writer = None
        self.engine.dispose()

    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            while len(batch) < self.batch_max:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    self._queue.put(_STOP)
                    break
                batch.append(item)
            self._run(batch)

    def _run(self, batch: list[tuple[Op, Future[Any]]]) -> None:
        try:
            with self._tx() as c:
                results = [op(c) for op, _ in batch]
        except Exception as e:  # noqa: BLE001 - retried one by one below, each failing alone
            if len(batch) > 1:
                for item in batch:
                    self._run([item])
                return
            batch[0][1].set_exception(e)
            return
        self.batches += 1
        self.batched_writes += len(batch)
        for (_, fut), r in zip(batch, results, strict=True):
            fut.set_result(r)

    # ------------------------------------------------------------------ clients
    def add_client(self, name: str, token_sha256: str, scopes: list[str]) -> None:
        try:
            with self._tx() as c:
                c.execute(CLIENTS.insert().values(name=name, token_sha256=token_sha256, scopes=",".join(scopes),
                                                  created=time.time()))
        except IntegrityError as e:
            raise ValueError(f"a client named {name!r} exists already") from e

    def remove_client(self, name: str) -> bool:
        with self._tx() as c:
            return bool(c.execute(CLIENTS.delete().where(CLIENTS.c.name == name)).rowcount)

    def clients(self) -> list[dict[str, Any]]:
        with self._tx() as c:
            rows = c.execute(select(CLIENTS.c.name, CLIENTS.c.scopes, CLIENTS.c.created)
                             .order_by(CLIENTS.c.name)).all()
        return [{"name": r[0], "scopes": r[1].split(","), "created": r[2]} for r in rows]

    def client_by_token(self, token_sha256: str) -> tuple[str, set[str]] | None:
        with self._tx() as c:
            row = c.execute(select(CLIENTS.c.name, CLIENTS.c.scopes)
                            .where(CLIENTS.c.token_sha256 == token_sha256)).first()
        return (row[0], set(row[1].split(","))) if row else None

    # ------------------------------------------------------------------ write operations (run by the writer)
    def op_add_job(self, job_id: str, client: str, request: dict[str, Any], annotation: dict[str, Any],
                   source: str, log_path: str | None = None) -> Op:
        """The request and its first annotation in one transaction; the op returns False for a duplicate id."""
        req, body = json.dumps(request), json.dumps(annotation)

        def op(c: Connection) -> bool:
            now = time.time()
            ins = _insert(self.dialect, JOBS).values(
                id=job_id, client=client, state="submitted", request=req, created=now, updated=now,
                log_bytes=0, log_path=log_path, log_offset=0).on_conflict_do_nothing(index_elements=["id"])
            if c.execute(ins.returning(JOBS.c.id)).first() is None:  # rowcount is -1 on psycopg
                return False
            c.execute(ANNOTATIONS.insert().values(job_id=job_id, made=now, source=source, body=body))
            return True
        return op

    def op_add_annotation(self, job_id: str, annotation: dict[str, Any], source: str,
                          state: str | None = None, log: str | None = None, log_offset: int | None = None,
                          log_path: str | None = None) -> Op:
        """A newer annotation; with `log`, the chunk it was made from (and the job's log size/offset)."""
        body = json.dumps(annotation)

        def op(c: Connection) -> None:
            now = time.time()
            values: dict[str, Any] = {"updated": now}
            if state:
                values["state"] = state
            if log is not None:
                c.execute(LOG_CHUNKS.insert().values(job_id=job_id, text=log))
                values["log_bytes"] = JOBS.c.log_bytes + len(log.encode())
            if log_offset is not None:
                values["log_offset"] = log_offset
            if log_path is not None:
                values["log_path"] = log_path
            c.execute(ANNOTATIONS.insert().values(job_id=job_id, made=now, source=source, body=body))
            c.execute(JOBS.update().where(JOBS.c.id == job_id).values(**values))
        return op

    def add_job(self, job_id: str, client: str, request: dict[str, Any], annotation: dict[str, Any],
                source: str) -> bool:
        return bool(self.write(self.op_add_job(job_id, client, request, annotation, source)))

    def add_annotation(self, job_id: str, annotation: dict[str, Any], source: str, state: str | None = None) -> None:
        self.write(self.op_add_annotation(job_id, annotation, source, state))

    # ------------------------------------------------------------------ reads
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
                "log_path": row["log_path"], "log_offset": row["log_offset"],
                "annotation": json.loads(ann[0]) if ann else None, "source": ann[1] if ann else None,
                "annotated_at": ann[2] if ann else None}

    def jobs(self, state: str | None = None, limit: int = 1000, after: str | None = None) -> list[dict[str, Any]]:
        """Jobs in submission order (by id within the same instant), `limit` at a time after job `after`."""
        q = select(JOBS.c.id, JOBS.c.state, JOBS.c.client, JOBS.c.updated).order_by(JOBS.c.created, JOBS.c.id)
        if state:
            q = q.where(JOBS.c.state == state)
        with self._tx() as c:
            if after is not None:
                created = c.execute(select(JOBS.c.created).where(JOBS.c.id == after)).scalar()
                if created is not None:
                    q = q.where((JOBS.c.created > created) | ((JOBS.c.created == created) & (JOBS.c.id > after)))
            return [dict(r) for r in c.execute(q.limit(limit)).mappings()]

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
