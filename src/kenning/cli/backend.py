"""The CLI's two ways to reach memories: the running daemon over HTTP, or the store directly.

Both answer with the same dict shapes as the HTTP API, so commands don't care which it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kenning.client import KenningClient
from kenning.core.config import Settings
from kenning.core.types import MemoryDraft, MemoryFilter


class LocalBackend:
    """Opens the store in this process (daemon not running). Loads the model only to search
    (recall) or to embed a batch (import, edit); `remember` stores raw-first."""

    def __init__(self, settings: Settings) -> None:
        from kenning.service import Kenning

        self.kenning = Kenning(settings)
        self.where = f"local store {settings.db_path}"

    def close(self) -> None:
        self.kenning.close()

    def remember(self, body: dict) -> dict:
        """Raw-first: stored without a vector (no model load); the next recall or the daemon embeds it.
        As in the HTTP API, a given type is kept as is."""
        draft = MemoryDraft(**body, type_explicit="type" in body)
        result = self.kenning.remember(draft, actor=body.get("source") or "cli", embed=False)
        return {"id": result.id, "deduped": result.deduped}

    def remember_batch(self, memories: list[dict]) -> list[dict]:
        results = self.kenning.remember_many([MemoryDraft(**m) for m in memories], actor="cli-import")
        return [{"id": r.id, "deduped": r.deduped} for r in results]

    def recall(self, body: dict) -> list[dict]:
        body = dict(body)
        self.kenning.embed_pending()
        query, limit, preset = body.pop("query"), body.pop("limit", None), body.pop("preset", None)
        hits = self.kenning.recall(query, limit=limit, filters=MemoryFilter(**body), config=preset)
        return [h.to_dict() for h in hits]

    def get(self, memory_id: str) -> dict:
        memory = self.kenning.get(memory_id)
        data = memory.to_dict()
        data["history"] = self.kenning.history(memory_id)
        data["lifecycle"] = self.kenning.observer.lifecycle_of(memory)
        return data

    def edit(self, memory_id: str, changes: dict) -> dict:
        reason = changes.pop("reason", None)
        return self.kenning.edit(memory_id, changes, actor="cli", reason=reason).to_dict()

    def forget(self, memory_id: str, *, purge: bool = False, reason: str | None = None) -> dict:
        if purge:
            self.kenning.purge(memory_id, actor="cli", reason=reason)
            return {"id": memory_id, "purged": True}
        return self.kenning.forget(memory_id, actor="cli", reason=reason).to_dict()

    def recover(self, memory_id: str) -> dict:
        return self.kenning.recover(memory_id, actor="cli").to_dict()

    def list(self, **params: Any) -> dict:
        limit, offset = params.pop("limit", 50), params.pop("offset", 0)
        kind = params.pop("type", None)
        filters = MemoryFilter(project=params.get("project"), types=[kind] if kind else None,
                               include_deleted=params.get("include_deleted", False), include_superseded=True)
        items, total = self.kenning.list(filters, limit=limit, offset=offset)
        return {"items": [m.to_dict() for m in items], "total": total, "limit": limit, "offset": offset}

    def stats(self) -> dict:
        return self.kenning.stats()

    def export(self, fmt: str, project: str | None = None) -> Iterator[str]:
        return self.kenning.export(fmt, MemoryFilter(project=project))


class DaemonBackend:
    def __init__(self, client: KenningClient) -> None:
        self.client = client
        self.where = f"daemon {client.base_url}"

    def __getattr__(self, name: str):
        return getattr(self.client, name)

    def close(self) -> None:
        self.client.close()


def open_backend(settings: Settings, *, prefer_daemon: bool = True):
    if prefer_daemon:
        client = KenningClient(settings.base_url, token=settings.auth_token, timeout=120.0)
        if client.is_up():
            return DaemonBackend(client)
        client.close()
    return LocalBackend(settings)
