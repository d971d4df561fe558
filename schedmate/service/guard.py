"""The ASGI layer in front of every route: body size limits, a body read timeout, the database's 503,
request metrics and the access log.

* A declared `Content-Length` over the route's limit is refused with 413 before the body is read; a body
  sent without one (chunked) is counted as it arrives and refused with 413 when it passes the limit.
* A client that sends its body slower than `body_timeout_s` between chunks gets 408.
* `StoreUnavailable` becomes 503 with the database's own message (the app's exception handler does it for
  routes; this layer for anything that escapes them).
A pure ASGI middleware (no `BaseHTTPMiddleware`), so streaming and the hot path stay cheap.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException

from schedmate.service.db import StoreUnavailable
from schedmate.service.metrics import Metrics, event

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("schedmate.service.access")


class BodyTooLarge(HTTPException):
    """An HTTPException, so FastAPI's body parsing lets it through as the 413 it is."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"body over {limit} bytes")


class BodyTimeout(HTTPException):
    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"no body data for {seconds:.0f} s")


async def send_json(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    def __init__(self, app: ASGIApp, metrics: Metrics, limit_for: Callable[[str], int],
                 body_timeout_s: float = 30.0) -> None:
        self.app, self.metrics, self.limit_for, self.body_timeout_s = app, metrics, limit_for, body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        path, method = scope["path"], scope["method"]
        limit = self.limit_for(path)
        status = 500
        started = False

        async def send_wrapped(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status, started = message["status"], True
            await send(message)

        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        try:
            if declared is not None and (not declared.isdigit() or int(declared) > limit):
                await send_json(send_wrapped, 413, f"body over {limit} bytes")
                return
            received = 0

            async def receive_limited() -> Message:
                nonlocal received
                try:
                    message = await asyncio.wait_for(receive(), self.body_timeout_s)
                except TimeoutError:
                    raise BodyTimeout(self.body_timeout_s) from None
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                    if received > limit:
                        raise BodyTooLarge(limit)
                return message

            await self.app(scope, receive_limited, send_wrapped)
        except HTTPException as e:  # raised while reading the body outside a route
            if not started:
                await send_json(send_wrapped, e.status_code, str(e.detail))
        except StoreUnavailable as e:
            if not started:
                await send_json(send_wrapped, 503, f"database unavailable: {e}", [(b"retry-after", b"5")])
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            elapsed = time.perf_counter() - t0
            self.metrics.requests.labels(route, method, str(status)).inc()
            self.metrics.latency.labels(route).observe(elapsed)
            if status >= 500:
                event(log, logging.WARNING, "request failed", method=method, path=path, status=status,
                      ms=round(elapsed * 1000, 2))
            else:
                event(log, logging.INFO, "request", method=method, path=path, status=status,
                      ms=round(elapsed * 1000, 2))
