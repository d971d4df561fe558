"""The job-history store: one record per finished job, searchable by text similarity, never by the future.

Two backends behind one interface (`HistoryStore`), chosen by name with `STORES.create(name, ...)`
or `open_store(name, ...)`:

* `chroma`: chromadb, cosine space, MiniLM embeddings. Embedded `PersistentClient` at `path` (default
  `$SCHEDMATE_HOME/history`, `SCHEDMATE_HOME` defaulting to `~/.schedmate`), or an `HttpClient` for a
  shared Chroma server when `url=` or `SCHEDMATE_CHROMA_URL` is set (`http://host:port`). Use it for a
  history that outlives a process (a live scheduler, several schedulers sharing one server). A query
  costs a few ms and every query is two round trips (same user, everyone), so it is not for 10k-job replays.
* `memory`: exact cosine in numpy, in process, nothing persisted; embeddings `minilm` (same vectors as
  the chroma backend) or `hashed` (no model; for 100k-job replays or machines without the model).
  Texts are grouped: identical texts share one vector, so a query costs O(distinct texts), not O(jobs).
  This is what the replay annotators use.

Rules both backends keep:

* **No leakage.** `query` and `recent` take the query time `now` and only see records with
  `end_time < now` (chroma: a `where` filter on `end_time`; memory: a bisect on end times).
* **Batched, idempotent.** `add` validates and buffers; the buffer is flushed before any read (or by
  `flush()`). The record id is the job id: adding a job again replaces it (a job that finished twice in
  a replay, or a re-ingest after a crash).
* **Bad input loses nothing.** Every record is validated on its own before anything is written; an
  invalid one is reported in `AddResult.rejected` (index, job id, field, problem) and the rest go in.
  If the write itself fails (server down), the buffer is kept and the error raised; nothing stored is touched.
* Ties in similarity (same text) are broken by recency: the most recently finished first (chroma: among
  the 4k nearest it returns; its order inside a larger group of equal texts is its own).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from pydantic import ValidationError
from sortedcontainers import SortedList

from schedmate.history.embed import Embedder, EmbeddingModelMissing, MiniLMEmbedder, make_embedder
from schedmate.history.records import HistoryRecord
from schedmate.registry import Registry


def schedmate_home() -> Path:
    return Path(os.environ.get("SCHEDMATE_HOME") or "~/.schedmate").expanduser()


class StoreUnavailable(RuntimeError):
    """The backend cannot be opened (package missing, server unreachable)."""


@dataclass(frozen=True)
class Neighbor:
    record: HistoryRecord
    similarity: float


@dataclass(frozen=True)
class RejectedRecord:
    index: int
    job_id: str | None
    error: str

    def __str__(self) -> str:
        return f"record {self.index} (job {self.job_id!r}): {self.error}"


@dataclass
class AddResult:
    accepted: int = 0
    rejected: list[RejectedRecord] = field(default_factory=list)


def _describe(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "record"
        parts.append(f"field {loc!r}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def validate_records(records: Iterable[HistoryRecord | dict[str, Any]]) -> tuple[list[HistoryRecord], list[RejectedRecord]]:
    good: list[HistoryRecord] = []
    bad: list[RejectedRecord] = []
    for i, r in enumerate(records):
        raw = r.model_dump() if isinstance(r, HistoryRecord) else r
        job_id = raw.get("job_id") if isinstance(raw, dict) else None
        try:
            if not isinstance(raw, dict):
                raise TypeError(f"expected a HistoryRecord or a dict, got {type(r).__name__}")
            good.append(HistoryRecord.model_validate(raw))
        except ValidationError as e:
            bad.append(RejectedRecord(i, job_id if isinstance(job_id, str) else None, _describe(e)))
        except TypeError as e:
            bad.append(RejectedRecord(i, None, str(e)))
    return good, bad


class HistoryStore(ABC):
    name = "store"

    def __init__(self) -> None:
        self._buffer: dict[str, HistoryRecord] = {}

    def add(self, records: Iterable[HistoryRecord | dict[str, Any]]) -> AddResult:
        """Validate and buffer; invalid records are rejected one by one, the others kept."""
        good, bad = validate_records(records)
        for r in good:
            self._buffer[r.job_id] = r
        return AddResult(accepted=len(good), rejected=bad)

    def flush(self) -> int:
        """Write the buffer; returns the number of records written."""
        if not self._buffer:
            return 0
        batch = list(self._buffer.values())
        self._write(batch)  # raises -> the buffer is kept
        self._buffer.clear()
        return len(batch)

    @abstractmethod
    def _write(self, batch: list[HistoryRecord]) -> None: ...

    @abstractmethod
    def query(self, text: str, now: float, k: int, user: str | None = None,
              min_similarity: float = -1.0) -> list[Neighbor]:
        """Up to k records finished before `now` (of `user` if given), most similar first."""

    @abstractmethod
    def recent(self, now: float, k: int, user: str | None = None) -> list[HistoryRecord]:
        """Up to k records finished before `now` (of `user` if given), most recently finished first."""

    @abstractmethod
    def count(self) -> int:
        """Records stored (after a flush)."""

    def outcome_stats(self, now: float, k: int, user: str | None = None) -> tuple[int, int]:
        """(jobs, jobs that ended early: failed, cancelled, timed out) among `recent(now, k, user)`."""
        recs = self.recent(now, k, user)
        return len(recs), sum(r.outcome.value != "completed" for r in recs)

    def get(self, job_id: str) -> HistoryRecord | None:
        """A stored record by job id (no time filter: for inspection, not for predictions)."""
        return None

    def close(self) -> None:
        self.flush()


STORES: Registry[HistoryStore] = Registry("history store")


@STORES.register("memory")
class MemoryStore(HistoryStore):
    """Exact cosine over grouped texts; see the module docstring."""

    name = "memory"

    def __init__(self, embedder: str | Embedder = "minilm") -> None:
        super().__init__()
        self.embedder = make_embedder(embedder)
        self._rows: list[HistoryRecord] = []
        self._early: list[bool] = []
        self._row_of: dict[str, int] = {}
        self._group_of_text: dict[str, int] = {}
        self._group_of_row: list[int] = []
        self._gvec = np.zeros((16, self.embedder.dim), dtype=np.float32)
        self._ng = 0
        self._members: list[SortedList] = []
        self._members_user: dict[tuple[int, str], SortedList] = {}
        self._by_user: dict[str, SortedList] = {}
        self._all = SortedList()

    def _group(self, text: str, vec: np.ndarray) -> int:
        g = self._group_of_text.get(text)
        if g is None:
            g = self._ng
            if g == len(self._gvec):
                self._gvec = np.concatenate([self._gvec, np.zeros_like(self._gvec)])
            self._gvec[g] = vec
            self._ng += 1
            self._group_of_text[text] = g
            self._members.append(SortedList())
        return g

    def _unlink(self, row: int) -> None:
        old = self._rows[row]
        key = (old.end_time, row)
        g = self._group_of_row[row]
        self._members[g].remove(key)
        self._all.remove(key)
        if old.user is not None:
            self._members_user[(g, old.user)].remove(key)
            self._by_user[old.user].remove(key)

    def _write(self, batch: list[HistoryRecord]) -> None:
        texts = [r.text for r in batch]
        vecs = self.embedder.embed(texts)  # before any change: a failing model leaves the store as it was
        for r, text, vec in zip(batch, texts, vecs, strict=True):
            g = self._group(text, vec)
            row = self._row_of.get(r.job_id)
            if row is None:
                row = len(self._rows)
                self._rows.append(r)
                self._early.append(False)
                self._group_of_row.append(g)
                self._row_of[r.job_id] = row
            else:
                self._unlink(row)
                self._rows[row] = r
                self._group_of_row[row] = g
            self._early[row] = r.outcome.value != "completed"
            key = (r.end_time, row)
            self._members[g].add(key)
            self._all.add(key)
            if r.user is not None:
                self._members_user.setdefault((g, r.user), SortedList()).add(key)
                self._by_user.setdefault(r.user, SortedList()).add(key)

    @staticmethod
    def _before(lst: SortedList, now: float) -> int:
        return lst.bisect_left((now, -1))  # entries (end_time, row) with end_time < now

    def query(self, text: str, now: float, k: int, user: str | None = None,
              min_similarity: float = -1.0) -> list[Neighbor]:
        self.flush()
        if k <= 0 or self._ng == 0:
            return []
        q = self.embedder.embed([text])[0]
        sims = self._gvec[: self._ng] @ q
        out: list[Neighbor] = []
        for g in np.argsort(-sims, kind="stable"):
            s = float(sims[g])
            if s < min_similarity:
                break
            lst = self._members[g] if user is None else self._members_user.get((int(g), user))
            if not lst:
                continue
            pos = self._before(lst, now)
            while pos > 0 and len(out) < k:
                pos -= 1
                out.append(Neighbor(self._rows[lst[pos][1]], s))
            if len(out) >= k:
                break
        return out

    def _recent_rows(self, now: float, k: int, user: str | None) -> list[int]:
        self.flush()
        lst = self._all if user is None else self._by_user.get(user)
        if not lst or k <= 0:
            return []
        pos = self._before(lst, now)
        return [row for _, row in lst.islice(max(0, pos - k), pos, reverse=True)]

    def recent(self, now: float, k: int, user: str | None = None) -> list[HistoryRecord]:
        return [self._rows[r] for r in self._recent_rows(now, k, user)]

    def outcome_stats(self, now: float, k: int, user: str | None = None) -> tuple[int, int]:
        rows = self._recent_rows(now, k, user)
        return len(rows), sum(self._early[r] for r in rows)

    def count(self) -> int:
        self.flush()
        return len(self._rows)

    def get(self, job_id: str) -> HistoryRecord | None:
        self.flush()
        row = self._row_of.get(job_id)
        return None if row is None else self._rows[row]


@STORES.register("chroma")
class ChromaStore(HistoryStore):
    """chromadb collection `collection`, persistent at `path` or on the server at `url`."""

    name = "chroma"
    WRITE_BATCH = 1000

    def __init__(self, path: str | os.PathLike[str] | None = None, url: str | None = None,
                 collection: str = "job_history", embedder: str | Embedder = "minilm") -> None:
        super().__init__()
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        try:
            import chromadb
        except ImportError as e:
            raise StoreUnavailable(
                f"chromadb is not installed ({e}): `pip install chromadb==1.5.9` (schedmate[rag]), "
                "or use the `memory` history store") from None
        self.embedder = make_embedder(embedder)
        if not isinstance(self.embedder, MiniLMEmbedder):
            raise TypeError("the chroma history store embeds with `minilm` only (use the memory store for `hashed`)")
        ef = self.embedder.chroma_function()
        settings = chromadb.Settings(anonymized_telemetry=False)
        url = url or os.environ.get("SCHEDMATE_CHROMA_URL") or None
        if url:
            u = urlparse(url if "://" in url else f"http://{url}")
            if not u.hostname:
                raise ValueError(f"bad chroma url {url!r}: expected http://host:port")
            try:
                self.client = chromadb.HttpClient(host=u.hostname, port=u.port or 8000, ssl=u.scheme == "https",
                                                  settings=settings)
                self.client.heartbeat()
            except Exception as e:  # noqa: BLE001 - any transport error means the same thing here
                raise StoreUnavailable(f"chroma server at {url} is not reachable: {e}") from None
            self.where = url
        else:
            p = Path(path) if path is not None else schedmate_home() / "history"
            p.mkdir(parents=True, exist_ok=True)
            self.client = chromadb.PersistentClient(path=str(p), settings=settings)
            self.where = str(p)
        self.collection = self.client.get_or_create_collection(
            collection, embedding_function=ef, metadata={"hnsw:space": "cosine"})

    def _write(self, batch: list[HistoryRecord]) -> None:
        for i in range(0, len(batch), self.WRITE_BATCH):
            part = batch[i: i + self.WRITE_BATCH]
            texts = [r.text for r in part]
            vecs = self.embedder.embed(texts)
            self.collection.upsert(ids=[r.job_id for r in part], embeddings=[v.tolist() for v in vecs],
                                   documents=texts, metadatas=[r.metadata() for r in part])  # type: ignore[arg-type]

    @staticmethod
    def _where(now: float, user: str | None) -> dict[str, Any]:
        cond: dict[str, Any] = {"end_time": {"$lt": float(now)}}
        return {"$and": [cond, {"user": {"$eq": user}}]} if user is not None else cond

    def query(self, text: str, now: float, k: int, user: str | None = None,
              min_similarity: float = -1.0) -> list[Neighbor]:
        self.flush()
        if k <= 0:
            return []
        q = self.embedder.embed([text])[0]
        # ask for more than k: among equal similarities chroma's order is arbitrary, ours is by recency
        res = self.collection.query(query_embeddings=[q.tolist()], n_results=4 * k, where=self._where(now, user),
                                    include=["metadatas", "distances"])  # type: ignore[list-item]
        metas = (res.get("metadatas") or [[]])[0]
        dists = (res.get("distances") or [[]])[0]
        hits = [(1.0 - float(d), HistoryRecord.from_metadata(dict(m))) for m, d in zip(metas, dists, strict=True)]
        # Same order rule as the memory store: similarity, then the most recently finished.
        hits.sort(key=lambda h: (-round(h[0], 6), -h[1].end_time))
        return [Neighbor(r, s) for s, r in hits if s >= min_similarity][:k]

    def recent(self, now: float, k: int, user: str | None = None) -> list[HistoryRecord]:
        self.flush()
        if k <= 0:
            return []
        res = self.collection.get(where=self._where(now, user), include=["metadatas"])  # type: ignore[list-item]
        recs = [HistoryRecord.from_metadata(dict(m)) for m in (res.get("metadatas") or [])]
        recs.sort(key=lambda r: (-r.end_time, r.job_id))
        return recs[:k]

    def count(self) -> int:
        self.flush()
        return int(self.collection.count())

    def get(self, job_id: str) -> HistoryRecord | None:
        self.flush()
        res = self.collection.get(ids=[job_id], include=["metadatas"])  # type: ignore[list-item]
        metas = res.get("metadatas") or []
        return HistoryRecord.from_metadata(dict(metas[0])) if metas else None


def open_store(name: str | None = None, **kwargs: Any) -> HistoryStore:
    """A store by name; `None` -> `chroma` if `SCHEDMATE_CHROMA_URL` is set, else `memory`."""
    if name is None:
        name = "chroma" if os.environ.get("SCHEDMATE_CHROMA_URL") else "memory"
    return STORES.create(name, **kwargs)


__all__ = [
    "STORES",
    "AddResult",
    "ChromaStore",
    "EmbeddingModelMissing",
    "HistoryStore",
    "MemoryStore",
    "Neighbor",
    "RejectedRecord",
    "StoreUnavailable",
    "open_store",
    "schedmate_home",
    "validate_records",
]
