"""Who may call the service: bearer tokens per client with scopes, stored as sha256 digests; rate limits.

Scopes: `submit` (post jobs, logs, finishes, admission reviews), `read` (get jobs), `admin` (everything,
and managing clients). The check runs as an ASGI middleware before routing and before the body is read
(`required_scope` maps method and path to a scope); routes find the client's name in `request.state.client`. No token or an unknown one: 401; a token without the scope: 403; a client over its
rate: 429 with `Retry-After`. A token found in the database is remembered for `cache_s` seconds, so a
token revoked with `schedmate token revoke` (another process) stops working within that time; one revoked
through the API stops at once.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException

from schedmate.service.db import Store
from schedmate.service.guard import ASGIApp, Receive, Scope, Send, send_json

SCOPES = ("submit", "read", "admin")
CLIENT_NAME = re.compile(r"^[\w.@-]{1,128}$")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def parse_scopes(text: str) -> list[str]:
    scopes = [s.strip() for s in text.split(",") if s.strip()]
    bad = sorted(set(scopes) - set(SCOPES))
    if bad or not scopes:
        raise ValueError(f"scopes must be among {', '.join(SCOPES)} (got {', '.join(scopes) or 'none'})")
    return scopes


def create_token(store: Store, name: str, scopes: list[str]) -> str:
    """A new client and its token (returned once; only the digest is stored)."""
    parse_scopes(",".join(scopes))
    if not CLIENT_NAME.fullmatch(name):
        raise ValueError(f"client name {name!r}: letters, digits, _ . @ - only, at most 128")
    token = "smt_" + secrets.token_urlsafe(32)
    store.add_client(name, hash_token(token), scopes)
    return token


class RateLimiter:
    """A token bucket per client: `rate` requests per second, bursts up to `burst`."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self._state: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, client: str) -> bool:
        now = time.monotonic()
        with self._lock:
            tokens, last = self._state.get(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self._state[client] = (tokens, now)
                return False
            self._state[client] = (tokens - 1, now)
            return True


class Authenticator:
    def __init__(self, store: Store, limiter: RateLimiter, cache_s: float = 10.0) -> None:
        self.store, self.limiter, self.cache_s = store, limiter, cache_s
        self._cache: dict[str, tuple[str, frozenset[str], float]] = {}

    def forget(self, name: str) -> None:
        """Drop a client's cached tokens (after it was revoked here)."""
        self._cache = {k: v for k, v in self._cache.items() if v[0] != name}

    def lookup(self, token: str) -> tuple[str, frozenset[str]] | None:
        digest = hash_token(token)
        hit = self._cache.get(digest)
        now = time.monotonic()
        if hit is not None and hit[2] > now:
            return hit[0], hit[1]
        found = self.store.client_by_token(digest)
        if found is None:
            self._cache.pop(digest, None)
            return None
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (found[0], frozenset(found[1]), now + self.cache_s)
        return found[0], frozenset(found[1])

    def check(self, authorization: str, scope: str) -> str:
        """The client's name for an `Authorization` header value, or the HTTP error that refuses it."""
        if not authorization.lower().startswith("bearer ") or not authorization[7:].strip():
            raise HTTPException(401, "a bearer token is required (schedmate token create)",
                                headers={"WWW-Authenticate": "Bearer"})
        found = self.lookup(authorization[7:].strip())
        if found is None:
            raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
        name, scopes = found
        if scope not in scopes and "admin" not in scopes:
            raise HTTPException(403, f"this token lacks the {scope!r} scope")
        if not self.limiter.allow(name):
            raise HTTPException(429, "rate limit: slow down", headers={"Retry-After": "1"})
        return name


def required_scope(method: str, path: str, admission_token: bool = True) -> str | None:
    """The scope a request needs; None for the open endpoints (health, metrics, docs)."""
    if path.startswith("/v1/clients"):
        return "admin"
    if path == "/v1/admission/kubernetes":
        return "submit" if admission_token else None
    if path.startswith("/v1/"):
        return "read" if method in ("GET", "HEAD") else "submit"
    return None


class AuthMiddleware:
    """Refuses a request without the scope its route needs before anything else runs (a dependency per
    route would cost a tenth of the hot path in FastAPI's dependency solving)."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator, required: Callable[[str, str], str | None]) -> None:
        self.app, self.auth, self.required = app, authenticator, required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            need = self.required(scope["method"], scope["path"])
            if need is not None:
                header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), "")
                try:
                    who = self.auth.check(header, need)
                except HTTPException as e:
                    headers: Any = [(k.lower().encode(), v.encode()) for k, v in (e.headers or {}).items()]
                    await send_json(send, e.status_code, str(e.detail), headers)
                    return
                scope.setdefault("state", {})["client"] = who
        await self.app(scope, receive, send)
