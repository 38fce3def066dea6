"""The request guard: what every request must satisfy before any route sees it.

One ASGI middleware, so no route can forget a check:
- Host must name this daemon (a loopback name/address or the configured host): a page on
  another site whose DNS name was rebound to 127.0.0.1 sends its own name → 421.
- With a token configured, `/api/*` (but `/api/health`), `/openapi.json`, `/docs` and `/redoc`
  need `Authorization: Bearer <token>` → 401.
- Teams: a bearer may also be a user token (`kenning token create`); once one exists, a request
  without any bearer is a 401 too. The request's viewer (who asks: a token's user and team, or the
  local user who sees all) goes into `scope["state"]["viewer"]` for the routes. A user token
  reaches only the routes that apply scopes (USER_ROUTES) → 403 elsewhere.
- Write methods: an `Origin` other than the daemon's own → 403; a body that is not
  `application/json` → 415 (a browser sends `text/plain` cross-site without a preflight).
- JSON bodies of write methods nested deeper than `MAX_JSON_DEPTH` or holding lone UTF-16
  surrogates → 400 (they crash the parser or the store's UTF-8 encoder otherwise).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from kenning.core.config import Settings
from kenning.core.limits import json_body_problem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
TOKEN_FREE_API = frozenset({"/api/health"})
TOKEN_DOCS = ("/openapi.json", "/docs", "/redoc")
# What a user token may call: the routes that filter by the caller's scopes (memory, export, the
# injecting hooks, feedback). Everything else (diagnostics, graph, sessions, predictor, …) shows
# every user's data and stays with the server's own user.
USER_ROUTES = ("/api/memory", "/api/export", "/api/hooks/session-start", "/api/hooks/user-prompt-submit",
               "/api/hooks/feedback", "/api/feedback", "/api/health",
               "/api/hooks/replay")  # a spooled event for one of the hooks above (hook_replay checks which)


def token_ok(authorization: str | None, token: str | None) -> bool:
    """True when no token is configured or the header carries it (constant-time compare)."""
    if not token:
        return True
    return hmac.compare_digest((authorization or "").encode(), f"Bearer {token}".encode())


def host_name(host_header: str) -> str:
    """`[::1]:3850` → `::1`, `LocalHost:3850` → `localhost`."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def is_loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def needs_token(path: str) -> bool:
    if path.startswith("/api/"):
        return path not in TOKEN_FREE_API
    return path.startswith(TOKEN_DOCS)


class RequestGuard:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.token = settings.auth_token
        self.configured_host = settings.host.strip("[]").lower()

    def host_allowed(self, name: str) -> bool:
        if self.configured_host in WILDCARD_HOSTS:
            return True  # bound to every interface: a token is mandatory then (load_settings)
        return is_loopback(name) or name == self.configured_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self.header_problem(scope, headers)
        if problem is None:
            problem = self.identify(scope, headers)
        if problem is None and scope["method"] in WRITE_METHODS and _has_body(headers):
            body = await _read_body(receive)
            detail = json_body_problem(body)
            if detail is not None:
                problem = (400, detail)
            receive = _replay(body, receive)
        if problem is not None:
            await _reply(send, *problem)
            return
        await self.app(scope, receive, send)

    def header_problem(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if not self.host_allowed(host_name(host)):
            return 421, (f"Host {host!r} is not this daemon's address; use 127.0.0.1 or localhost "
                         "(requests for other names are refused to stop DNS rebinding)")
        if scope["method"] not in WRITE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and not _same_origin(origin, host):
            return 403, f"Origin {origin!r} may not write to this daemon; only its own dashboard may"
        if _has_body(headers):
            media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media_type != "application/json":
                return 415, f"Content-Type must be application/json, got {media_type or 'none'!r}"
        return None


    def identify(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """Who asks: the configured token or no token (a single-user daemon) → the local user;
        a user token → its user and team. 401 when a needed bearer is missing or wrong."""
        service = scope["app"].state.kenning
        authorization = headers.get("authorization")
        path = scope["path"]
        if not self.token and not service.team_mode():
            viewer = service.local_viewer  # a single-user daemon without a token: as before teams
        elif authorization and self.token and token_ok(authorization, self.token):
            viewer = service.local_viewer
        elif authorization and authorization.startswith("Bearer "):
            viewer = service.viewer_for_token(authorization[len("Bearer "):].strip())
        else:
            viewer = None
        if viewer is None:
            if needs_token(path):
                return 401, "missing or wrong bearer token"
        elif not viewer.sees_all and needs_token(path) and not path.startswith(TOKEN_DOCS) and not any(
                path == route or path.startswith(route + "/") for route in USER_ROUTES):
            return 403, f"{path} is not open to user tokens (it shows every user's data); use the server's own token"
        scope.setdefault("state", {})["viewer"] = viewer
        return None


def _same_origin(origin: str, host: str) -> bool:
    parts = urlsplit(origin.strip().lower())
    return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc == host.strip().lower()


def _has_body(headers: dict[str, str]) -> bool:
    if "transfer-encoding" in headers:
        return True
    try:
        return int(headers.get("content-length") or 0) > 0
    except ValueError:
        return True


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive_next: Receive) -> Receive:
    """Hand the buffered body to the app once, then pass through (for disconnect notices)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await receive_next()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _reply(send: Send, status: int, message: str) -> None:
    payload = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
