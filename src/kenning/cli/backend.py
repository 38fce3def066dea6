"""The CLI's two ways to reach memories: the running daemon over HTTP, or the store directly.

Both answer with the same dict shapes as the HTTP API, so commands don't care which it is.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kenning.core.config import Settings
from kenning.core.types import MemoryDraft, MemoryFilter

if TYPE_CHECKING:
    from kenning.client import KenningClient
    from kenning.service import Kenning

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class LocalBackend:
    """Works on the store in this process (daemon not running). Reads, forget and recover open the
    store alone (`kenning.localstore`); what stores or searches builds the whole service (`kenning`)
    at first use, which loads the model only to search (recall) or to embed a batch (import, edit);
    `remember` stores raw-first."""

    def __init__(self, settings: Settings) -> None:
        from kenning.localstore import LocalStore

        self.settings = settings
        self.store = LocalStore(settings)
        self._kenning: Kenning | None = None
        self.where = f"local store {settings.db_path}"

    @property
    def kenning(self) -> Kenning:
        """The whole service on this store (built at first use; the store is then the service's)."""
        if self._kenning is None:
            from kenning.service import Kenning

            self.store.close()
            self._kenning = Kenning(self.settings)
            self.store = self._kenning.reads  # the service's reads, on its store
        return self._kenning

    def close(self) -> None:
        if self._kenning is not None:
            self._kenning.close()
        else:
            self.store.close()

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
        memory = self.store.get(memory_id)
        data = memory.to_dict()
        data["history"] = self.store.history(memory_id)
        data["lifecycle"] = self.store.lifecycle_of(memory)
        return data

    def edit(self, memory_id: str, changes: dict) -> dict:
        reason = changes.pop("reason", None)
        return self.kenning.edit(memory_id, changes, actor="cli", reason=reason).to_dict()

    def forget(self, memory_id: str, *, purge: bool = False, reason: str | None = None) -> dict:
        if purge:
            self.store.purge(memory_id, actor="cli", reason=reason)
            return {"id": memory_id, "purged": True}
        return self.store.forget(memory_id, actor="cli", reason=reason).to_dict()

    def recover(self, memory_id: str) -> dict:
        return self.store.recover(memory_id, actor="cli").to_dict()

    def list(self, **params: Any) -> dict:
        limit, offset = params.pop("limit", 50), params.pop("offset", 0)
        kind = params.pop("type", None)
        filters = MemoryFilter(project=params.get("project"), types=[kind] if kind else None,
                               include_deleted=params.get("include_deleted", False), include_superseded=True)
        items, total = self.store.list(filters, limit=limit, offset=offset)
        return {"items": [m.to_dict() for m in items], "total": total, "limit": limit, "offset": offset}

    def stats(self) -> dict:
        return self.store.stats()

    def export(self, fmt: str, project: str | None = None) -> Iterator[str]:
        return self.store.export(fmt, MemoryFilter(project=project))


class DaemonBackend:
    def __init__(self, client: KenningClient) -> None:
        self.client = client
        self.where = f"daemon {client.base_url}"

    def __getattr__(self, name: str):
        return getattr(self.client, name)

    def close(self) -> None:
        self.client.close()


def nothing_listens(base_url: str) -> bool:
    """True when the daemon's address is on this machine and its port refuses connections: no daemon
    runs there, and the HTTP client need not be loaded to ask."""
    url = urlsplit(base_url)
    if url.hostname not in LOOPBACK:
        return False
    try:
        socket.create_connection((url.hostname, url.port or 80), timeout=0.5).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def open_backend(settings: Settings, *, prefer_daemon: bool = True):
    if prefer_daemon and not nothing_listens(settings.base_url):
        from kenning.client import KenningClient

        client = KenningClient(settings.base_url, token=settings.auth_token, timeout=120.0)
        if client.is_up():
            return DaemonBackend(client)
        client.close()
    return LocalBackend(settings)
