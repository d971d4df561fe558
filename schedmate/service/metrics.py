"""The service's metrics (Prometheus text format at `/metrics`) and its structured (JSON lines) logs.

    schedmate_http_requests_total{route,method,status}       requests answered
    schedmate_http_request_duration_seconds{route}           latency histogram, per route template
    schedmate_annotate_duration_seconds{path}                static / llm / log annotation time
    schedmate_llm_calls_total                                 LLM calls made by refinements
    schedmate_llm_queue_depth                                 refinements waiting for the model
    schedmate_events_total{event}                             everything else worth counting (jobs_submitted,
                                                              llm_queue_full, llm_failures, history_rebuilt, ...)
    schedmate_db_commits_total, schedmate_db_writes_total     group commits and the writes they carried

One registry per app, so several services in one process (tests) do not mix their counts.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("schedmate_http_requests", "HTTP requests answered",
                                ("route", "method", "status"), registry=r)
        self.latency = Histogram("schedmate_http_request_duration_seconds", "HTTP request latency",
                                 ("route",), buckets=LATENCY_BUCKETS, registry=r)
        self.annotate = Histogram("schedmate_annotate_duration_seconds", "Time to make an annotation",
                                  ("path",), buckets=LATENCY_BUCKETS, registry=r)
        self.llm_calls = Counter("schedmate_llm_calls", "LLM calls made by refinements", registry=r)
        self.events = Counter("schedmate_events", "Counted events", ("event",), registry=r)
        self.queue_depth = Gauge("schedmate_llm_queue_depth", "Refinements waiting for the model", registry=r)
        self.db_commits = Gauge("schedmate_db_commits_total", "Group commits of the writer", registry=r)
        self.db_writes = Gauge("schedmate_db_writes_total", "Writes carried by those commits", registry=r)

    def inc(self, event: str, by: int = 1) -> None:
        if event == "llm_calls":
            self.llm_calls.inc(by)
        else:
            self.events.labels(event).inc(by)

    def observe(self, path: str, seconds: float) -> None:
        self.annotate.labels(path).observe(seconds)

    def count(self, event: str) -> float:
        """A counted event's value (for /readyz and tests)."""
        v = self.registry.get_sample_value("schedmate_events_total", {"event": event})
        return v or 0.0

    def bind(self, queue_depth: Callable[[], int], commits: Callable[[], int], writes: Callable[[], int]) -> None:
        self.queue_depth.set_function(queue_depth)
        self.db_commits.set_function(commits)
        self.db_writes.set_function(writes)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the record's `fields` if given."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": round(record.created, 3), "level": record.levelname.lower(),
                               "logger": record.name, "msg": record.getMessage()}
        out.update(getattr(record, "fields", {}))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def setup_logging(level: str = "warning") -> None:
    """JSON lines on stderr for the `schedmate.service` loggers (info: one line per request)."""
    logger = logging.getLogger("schedmate.service")
    if not any(isinstance(h.formatter, JsonFormatter) for h in logger.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(JsonFormatter())
        logger.addHandler(h)
    logger.setLevel(level.upper())
    logger.propagate = False


def event(log: logging.Logger, level: int, msg: str, **fields: Any) -> None:
    if log.isEnabledFor(level):
        log.log(level, msg, extra={"fields": fields})
