"""Typed httpx client for the daemon's HTTP API (used by the CLI, hooks and the MCP server)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import httpx

from kenning.core.errors import KenningError


class DaemonUnavailable(KenningError):
    """Nothing answers at the daemon's address."""

    status_code = 503


class ClientError(KenningError):
    """The daemon answered with an error; the message is its `error` field."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


def _raise_for_error(response: httpx.Response) -> None:
    if response.status_code >= 400:
        try:
            message = response.json().get("error") or response.text
        except ValueError:
            message = response.text
        raise ClientError(message, response.status_code)


QueryValue = str | int | float | bool | None  # one query parameter's value (None: httpx sends it empty)
Params = Mapping[str, QueryValue]


def _objects(answer: dict[str, object], key: str) -> list[dict[str, object]]:
    """`answer[key]`, a list of JSON objects (recall's and the batch's `results`)."""
    items = answer[key]
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ClientError(f"the daemon's {key!r} is not a list of JSON objects", 502)
    return items


class KenningClient:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, *, json: Mapping[str, object] | None = None,
                params: Params | None = None, timeout: float | None = None) -> dict[str, object]:
        """The daemon's answer to one call: a JSON object (every route answers one), untrusted: its
        readers narrow what they take from it."""
        try:
            response = self._http.request(method, path, json=json, params=params,
                                          timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
        except httpx.TransportError as exc:
            raise self._unavailable(exc) from exc
        _raise_for_error(response)
        answer = response.json()
        if not isinstance(answer, dict):
            raise ClientError(f"{method} {path}: the daemon's answer is not a JSON object", 502)
        return answer

    def _unavailable(self, exc: Exception) -> DaemonUnavailable:
        return DaemonUnavailable(f"no kenning daemon at {self.base_url} ({exc.__class__.__name__}); "
                                 "start it with `kenning daemon start`")

    def stream_text(self, path: str, *, params: Params | None = None) -> Iterator[str]:
        """GET a streamed text answer chunk by chunk (exports)."""
        try:
            with self._http.stream("GET", path, params=params) as response:
                if response.status_code >= 400:
                    response.read()
                    _raise_for_error(response)
                yield from response.iter_text()
        except httpx.TransportError as exc:
            raise self._unavailable(exc) from exc

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
