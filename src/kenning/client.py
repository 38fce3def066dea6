"""Typed client for the daemon's HTTP API (used by the CLI, hooks and the MCP server).

On the standard library's http.client, one connection per call: the daemon is on this machine (or a
team server), and a CLI command is one call — httpx cost a CLI command about a fifth of its CPU to
import and set up (issue 35: `bench/cli_speed.py`). Query values are sent as httpx sent them (True →
"true", None → empty).
"""

from __future__ import annotations

import codecs
import http.client
import json as jsonlib
import ssl
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import quote, urlencode, urlsplit

from kenning.core.errors import KenningError

CHUNK = 64 * 1024


class DaemonUnavailable(KenningError):
    """Nothing answers at the daemon's address."""

    status_code = 503


class ClientError(KenningError):
    """The daemon answered with an error; the message is its `error` field."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


def _raise_for_error(status: int, body: bytes) -> None:
    if status >= 400:
        text = body.decode("utf-8", "replace")
        try:
            answer = jsonlib.loads(text)
            message = (answer.get("error") if isinstance(answer, dict) else None) or text
        except ValueError:
            message = text
        raise ClientError(str(message), status)


QueryValue = str | int | float | bool | None  # one query parameter's value (None: sent empty)
Params = Mapping[str, QueryValue]


def _query(params: Params | None) -> str:
    if not params:
        return ""
    pairs = [(k, "true" if v is True else "false" if v is False else "" if v is None else str(v))
             for k, v in params.items()]
    return "?" + urlencode(pairs, quote_via=quote)


def _objects(answer: dict[str, object], key: str) -> list[dict[str, object]]:
    """`answer[key]`, a list of JSON objects (recall's and the batch's `results`)."""
    items = answer[key]
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ClientError(f"the daemon's {key!r} is not a list of JSON objects", 502)
    return items


class KenningClient:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        url = urlsplit(self.base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise KenningError(f"not an http(s) URL: {base_url!r}")
        self._https = url.scheme == "https"
        self._host, self._port = url.hostname, url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.timeout = timeout

    def close(self) -> None:
        """Nothing to release: each call opens and closes its own connection."""

    def _open(self, method: str, path: str, body: bytes | None, params: Params | None,
              timeout: float | None) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        limit = timeout if timeout is not None else self.timeout
        conn: http.client.HTTPConnection = (
            http.client.HTTPSConnection(self._host, self._port, timeout=limit, context=ssl.create_default_context())
            if self._https else http.client.HTTPConnection(self._host, self._port, timeout=limit))
        headers = {**self._headers, "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, self._prefix + path + _query(params), body=body, headers=headers)
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise self._unavailable(exc) from exc

    def request(self, method: str, path: str, *, json: Mapping[str, object] | None = None,
                params: Params | None = None, timeout: float | None = None) -> dict[str, object]:
        """The daemon's answer to one call: a JSON object (every route answers one), untrusted: its
        readers narrow what they take from it."""
        body = jsonlib.dumps(json).encode("utf-8") if json is not None else None
        conn, response = self._open(method, path, body, params, timeout)
        try:
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise self._unavailable(exc) from exc
        finally:
            conn.close()
        _raise_for_error(response.status, data)
        try:
            answer = jsonlib.loads(data)
        except ValueError as exc:
            raise ClientError(f"{method} {path}: the daemon's answer is not JSON", 502) from exc
        if not isinstance(answer, dict):
            raise ClientError(f"{method} {path}: the daemon's answer is not a JSON object", 502)
        return answer

    def _unavailable(self, exc: Exception) -> DaemonUnavailable:
        return DaemonUnavailable(f"no kenning daemon at {self.base_url} ({exc.__class__.__name__}); "
                                 "start it with `kenning daemon start`")

    def stream_text(self, path: str, *, params: Params | None = None) -> Iterator[str]:
        """GET a streamed text answer chunk by chunk (exports)."""
        conn, response = self._open("GET", path, None, params, None)
        try:
            if response.status >= 400:
                _raise_for_error(response.status, response.read())
            decoder = codecs.getincrementaldecoder("utf-8")()
            while chunk := response.read(CHUNK):
                text = decoder.decode(chunk)
                if text:
                    yield text
            tail = decoder.decode(b"", final=True)
            if tail:
                yield tail
        except (OSError, http.client.HTTPException) as exc:
            raise self._unavailable(exc) from exc
        finally:
            conn.close()

    def is_up(self, timeout: float = 0.5) -> bool:
        try:
            return self.request("GET", "/api/health", timeout=timeout).get("status") == "ok"
        except KenningError:
            return False

    # -- memory ------------------------------------------------------------------
    def health(self) -> dict[str, object]:
        return self.request("GET", "/api/health")

    def remember(self, body: Mapping[str, object]) -> dict[str, object]:
        return self.request("POST", "/api/memory/remember", json=body)

    def remember_batch(self, memories: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
        return _objects(self.request("POST", "/api/memory/batch", json={"memories": memories}), "results")

    def recall(self, body: Mapping[str, object]) -> list[dict[str, object]]:
        return _objects(self.request("POST", "/api/memory/recall", json=body), "results")

    def recall_config(self, preset: str | None = None) -> dict[str, object]:
        return self.request("GET", "/api/memory/recall/config", params={"preset": preset} if preset else None)

    def get(self, memory_id: str) -> dict[str, object]:
        return self.request("GET", f"/api/memory/{memory_id}")

    def edit(self, memory_id: str, changes: Mapping[str, object]) -> dict[str, object]:
        return self.request("PATCH", f"/api/memory/{memory_id}", json=changes)

    def forget(self, memory_id: str, *, purge: bool = False, reason: str | None = None) -> dict[str, object]:
        params = {"purge": str(purge).lower()} | ({"reason": reason} if reason else {})
        return self.request("DELETE", f"/api/memory/{memory_id}", params=params)

    def recover(self, memory_id: str) -> dict[str, object]:
        return self.request("POST", f"/api/memory/{memory_id}/recover")

    def list(self, **params: QueryValue) -> dict[str, object]:
        return self.request("GET", "/api/memory", params={k: v for k, v in params.items() if v is not None})

    def stats(self) -> dict[str, object]:
        return self.request("GET", "/api/stats")

    def export(self, fmt: str, project: str | None = None) -> Iterator[str]:
        return self.stream_text("/api/export", params={"format": fmt} | ({"project": project} if project else {}))

    # -- sessions and hooks (the /api/hooks contract) ------------------------------------
    def hook(self, event: str, body: Mapping[str, object], *, timeout: float | None = None) -> dict[str, object]:
        """POST /api/hooks/<event> (session-start, user-prompt-submit, pre-compaction,
        checkpoint, feedback, post-tool-use, session-end)."""
        return self.request("POST", f"/api/hooks/{event}", json=body, timeout=timeout)

    def session_start(self, body: Mapping[str, object], *, timeout: float | None = None) -> dict[str, object]:
        return self.hook("session-start", body, timeout=timeout)

    def user_prompt_submit(self, body: Mapping[str, object], *,
                           timeout: float | None = None) -> dict[str, object]:
        return self.hook("user-prompt-submit", body, timeout=timeout)

    def memory_feedback(self, session_key: str | None, scores: Mapping[str, float]) -> dict[str, object]:
        """Rate memories; without a session key they count for the latest session offered them."""
        body: dict[str, object] = {"scores": scores} | ({"session_key": session_key} if session_key else {})
        return self.request("POST", "/api/feedback", json=body)

    def session_end(self, body: Mapping[str, object], *, timeout: float | None = None) -> dict[str, object]:
        return self.hook("session-end", body, timeout=timeout)

    def sessions(self, **params: QueryValue) -> dict[str, object]:
        return self.request("GET", "/api/sessions", params={k: v for k, v in params.items() if v is not None})

    def session(self, session_key: str) -> dict[str, object]:
        return self.request("GET", f"/api/sessions/{session_key}")
