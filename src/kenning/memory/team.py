"""The laptop side of a team: memories of scope team or org live on the team server.

With `team.url` set, a daemon sends the team/org memories it is asked to remember to the server
(with the user's token, so the server records them as that user's), and the recall route merges
the server's results with its own. Personal and project memories never leave the laptop.
Offline, recall answers with local results and says so; a team write fails with a clear error
instead of being kept locally where the team would never see it (see docs/teams.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TypedDict, cast

import httpx

from kenning.core.config_team import TeamSettings
from kenning.core.errors import InvalidInput, KenningError
from kenning.core.text import normalize_content
from kenning.core.types import HitView, MemoryDraft

SHARED_SCOPES = frozenset({"team", "org"})
_NOT_SENT = ("writer", "type_explicit", "related_modules", "needs_review")


class TeamUnavailable(KenningError):
    """The team server did not answer (HTTP 503): nothing was stored."""

    status_code = 503


class TeamServer:
    def __init__(self, settings: TeamSettings) -> None:
        self.url = settings.url.rstrip("/") if settings.url else None
        headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
        self._http = httpx.Client(base_url=self.url or "http://invalid", headers=headers,
                                  timeout=settings.timeout_s) if self.url else None

    @property
    def enabled(self) -> bool:
        return self._http is not None

    def close(self) -> None:
        if self._http is not None:
            self._http.close()

    @staticmethod
    def is_shared(draft: MemoryDraft) -> bool:
        return draft.scope in SHARED_SCOPES

    def _post(self, path: str, body: Mapping[str, object]) -> object:
        """The team server's JSON answer (the caller names its shape)."""
        assert self._http is not None
        try:
            response = self._http.post(path, json=body)
        except httpx.HTTPError as exc:
            raise TeamUnavailable(f"team server {self.url} did not answer ({exc.__class__.__name__}); "
                                  "team and org memories are kept there only: nothing was stored") from exc
        if response.status_code >= 400:
            try:
                message = response.json().get("error") or response.text
            except ValueError:
                message = response.text
            if response.status_code in (401, 403):
                raise InvalidInput(f"team server {self.url} refused the token ({message}); check team.token")
            if response.status_code < 500:
                raise InvalidInput(f"team server: {message}")
            raise TeamUnavailable(f"team server {self.url} failed ({response.status_code}: {message})")
        return response.json()

    def remember_many(self, drafts: list[MemoryDraft]) -> list[StoredRef]:
        """Store the drafts on the server, all or nothing (its batch route); [{id, deduped}]."""
        bodies = [_body(d) for d in drafts]
        return cast(_Stored, self._post("/api/memory/batch", {"memories": bodies}))["results"]

    def merge_recall(self, body: Mapping[str, object], local: list[HitView],
                     limit: int) -> tuple[list[TeamHit], str]:
        """This daemon's hits and the server's for the same request, best score first, one per
        content; each hit says where it lives (`origin`). Returns (hits, 'ok' | why not)."""
        try:
            remote = cast(_Recalled, self._post("/api/memory/recall", body))["results"]
            state = "ok"
        except KenningError as exc:
            remote, state = [], str(exc)
        seen: set[str] = set()
        merged: list[TeamHit] = []
        hits = [_with_origin(h, "local") for h in local] + [_with_origin(h, "team") for h in remote]
        for hit in sorted(hits,
                          key=lambda h: -float(h.get("score") or 0.0)):
            key = normalize_content(hit.get("content") or "").content_hash
            if key not in seen:
                seen.add(key)
                merged.append(hit)
        return merged[:limit], state


class StoredRef(TypedDict):
    """The team server's answer for one stored draft."""

    id: str
    deduped: bool


class _Stored(TypedDict):  # the team server's /api/memory/batch answer
    results: list[StoredRef]


class _Recalled(TypedDict):  # the team server's /api/memory/recall answer (its other fields unused here)
    results: list[HitView]


class TeamHit(HitView):
    """A recall hit on a daemon with a team server: where it lives."""

    origin: str  # 'local' | 'team'


def _with_origin(hit: HitView, origin: str) -> TeamHit:
    return cast(TeamHit, dict(hit, origin=origin))  # dict(): an origin the hit already carries is replaced


def _body(draft: MemoryDraft) -> dict[str, object]:
    body = {k: v for k, v in asdict(draft).items() if k not in _NOT_SENT and v not in (None, [], {})}
    if not draft.type_explicit:
        body.pop("type", None)
    return body
