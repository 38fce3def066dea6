"""The CLI's two ways to reach memories: the running daemon over HTTP, or the store directly.

Both implement `Backend`, one typed Protocol holding every call the CLI's commands make, and answer
with the same dict shapes as the HTTP API, so commands don't care which it is
(tests/cli/test_backend_protocol.py checks both against it, signature by signature).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast
from urllib.parse import quote, urlsplit

from kenning.core.errors import ConfigError, KenningError
from kenning.core.types import MemoryDraft, MemoryFilter

if TYPE_CHECKING:
    from kenning.client import KenningClient
    from kenning.core.config import Settings
    from kenning.localstore import LocalStore, StoreStats
    from kenning.memory.review import ReviewItem, ReviewPage, RuleReport
    from kenning.retrieval.config import ConfigExplained
    from kenning.predictor.reports import AuditReport, TrainingHistory
    from kenning.core.types import HitView, MemoryDict
    from kenning.service import DocumentView, Kenning, MemoryView
    from kenning.sessions.views import SessionDetail, SessionList

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
ApiObject = dict[str, Any]  # one JSON object in the HTTP API's shape (the daemon's answer, or the same built here)
DocumentProgress = Callable[[str, int, int], None]  # (stage, chunks done, chunks in all; 0: not known yet)
GitProgress = Callable[[int, "int | None"], None]  # (commits done, commits in all; None: not known yet)
DOCUMENT_POLL_S = 0.25
DOCUMENT_QUEUED_GRACE_S = 2.0  # queued this long with no documents worker taking it: ingest it now
DOCUMENT_MAX_WAIT_S = 3600.0
GIT_POLL_S = 0.25


class Backend(Protocol):
    """Every call the CLI makes on memories, sessions, the graph, the pipeline, the predictor,
    review and ingestion; the daemon's API answers shapes."""

    where: str  # for messages: "daemon URL" or "local store PATH"

    def close(self) -> None: ...

    # -- memories
    def remember(self, body: ApiObject) -> ApiObject: ...
    def remember_batch(self, memories: list[ApiObject]) -> list[ApiObject]: ...
    def recall(self, body: ApiObject) -> list[HitView]: ...
    def recall_config(self, preset: str | None = None) -> ConfigExplained: ...
    def get(self, memory_id: str) -> MemoryView: ...
    def edit(self, memory_id: str, changes: ApiObject) -> MemoryDict: ...
    def forget(self, memory_id: str, *, purge: bool = False, reason: str | None = None) -> Mapping[str, object]: ...
    def recover(self, memory_id: str) -> MemoryDict: ...
    def list(self, *, limit: int = 50, offset: int = 0, project: str | None = None, type: str | None = None,
             include_deleted: bool = False) -> ApiObject: ...
    def stats(self) -> StoreStats: ...
    def export(self, fmt: str, project: str | None = None) -> Iterator[str]: ...

    # -- sessions, graph, pipeline
    def sessions(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> SessionList: ...
    def session(self, session_key: str) -> SessionDetail: ...
    def entities(self, *, query: str | None = None, entity_type: str | None = None, limit: int = 50,
                 offset: int = 0) -> ApiObject: ...
    def entity(self, name: str, *, memories: int = 50) -> ApiObject: ...
    def pipeline_status(self) -> ApiObject: ...

    # -- the predictor
    def predictor_status(self) -> ApiObject: ...
    def predictor_training(self, *, limit: int = 50, offset: int = 0) -> TrainingHistory: ...
    def predictor_audit(self, session_key: str) -> AuditReport: ...
    def predictor_train(self, *, base_weights: Path | None = None) -> ApiObject: ...

    # -- review of what kenning learned
    def review_pending(self, *, status: str = "pending", project: str | None = None,
                       session_key: str | None = None, limit: int = 100) -> ReviewPage: ...
    def review_accept(self, memory_id: str) -> ReviewItem: ...
    def review_edit(self, memory_id: str, changes: dict[str, str]) -> ReviewItem: ...
    def review_reject(self, memory_id: str, *, reason: str | None = None) -> ReviewItem: ...
    def review_rules(self) -> RuleReport: ...

    # -- ingestion
    def ingest_document(self, body: ApiObject, progress: DocumentProgress) -> DocumentView: ...
    def ingest_git(self, repo: Path, project: str | None, progress: GitProgress) -> ApiObject: ...


REVIEW_ACTOR = "review-cli"


class LocalBackend:
    """Works on the store in this process (daemon not running). Reads, forget and recover open the
    store alone (`kenning.localstore`); what stores or searches builds the whole service (`kenning`)
    at first use, which loads the model only to search (recall) or to embed a batch (import, edit);
    `remember` stores raw-first."""

    def __init__(self, settings: Settings) -> None:
        from kenning.localstore import LocalStore

        self.settings = settings
        self.store: LocalStore = LocalStore(settings)
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

    def remember(self, body: ApiObject) -> ApiObject:
        """Raw-first: stored without a vector (no model load); the next recall or the daemon embeds it.
        As in the HTTP API, a given type is kept as is."""
        draft = MemoryDraft(**body, type_explicit="type" in body)
        result = self.kenning.remember(draft, actor=body.get("source") or "cli", embed=False)
        return {"id": result.id, "deduped": result.deduped}

    def remember_batch(self, memories: list[ApiObject]) -> list[ApiObject]:
        results = self.kenning.remember_many([MemoryDraft(**m) for m in memories], actor="cli-import")
        return [{"id": r.id, "deduped": r.deduped} for r in results]

    def recall(self, body: ApiObject) -> list[HitView]:
        body = dict(body)
        self.kenning.embed_pending()
        query, limit, preset = body.pop("query"), body.pop("limit", None), body.pop("preset", None)
        hits = self.kenning.recall(query, limit=limit, filters=MemoryFilter(**body), config=preset)
        return [h.to_dict() for h in hits]

    def recall_config(self, preset: str | None = None) -> ConfigExplained:
        return self.kenning.recall_config(preset).explain()

    def get(self, memory_id: str) -> MemoryView:
        memory = self.store.get(memory_id)
        return {**memory.to_dict(), "history": self.store.history(memory_id),
                "lifecycle": self.store.lifecycle_of(memory)}

    def edit(self, memory_id: str, changes: ApiObject) -> MemoryDict:
        reason = changes.pop("reason", None)
        return self.kenning.edit(memory_id, changes, actor="cli", reason=reason).to_dict()

    def forget(self, memory_id: str, *, purge: bool = False, reason: str | None = None) -> Mapping[str, object]:
        if purge:
            self.store.purge(memory_id, actor="cli", reason=reason)
            return {"id": memory_id, "purged": True}
        return self.store.forget(memory_id, actor="cli", reason=reason).to_dict()

    def recover(self, memory_id: str) -> MemoryDict:
        return self.store.recover(memory_id, actor="cli").to_dict()

    def list(self, *, limit: int = 50, offset: int = 0, project: str | None = None, type: str | None = None,
             include_deleted: bool = False) -> ApiObject:
        filters = MemoryFilter(project=project, types=[type] if type else None,
                               include_deleted=include_deleted, include_superseded=True)
        items, total = self.store.list(filters, limit=limit, offset=offset)
        return {"items": [m.to_dict() for m in items], "total": total, "limit": limit, "offset": offset}

    def stats(self) -> StoreStats:
        return self.store.stats()

    def export(self, fmt: str, project: str | None = None) -> Iterator[str]:
        return self.store.export(fmt, MemoryFilter(project=project))

    def sessions(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> SessionList:
        return self.store.sessions(limit=limit, offset=offset, project=project)

    def session(self, session_key: str) -> SessionDetail:
        return self.store.session(session_key)

    def entities(self, *, query: str | None = None, entity_type: str | None = None, limit: int = 50,
                 offset: int = 0) -> ApiObject:
        return self.kenning.entities(query=query, entity_type=entity_type, limit=limit, offset=offset)

    def entity(self, name: str, *, memories: int = 50) -> ApiObject:
        return self.kenning.entity(name, memory_limit=memories)

    def pipeline_status(self) -> ApiObject:
        """Computed from the local store: the workers show as not running."""
        data = self.kenning.pipeline_status()
        waiting = data["waiting"]
        data["waiting"] = ["daemon not running: workers are idle", *(waiting if isinstance(waiting, list) else [])]
        return data

    def predictor_status(self) -> ApiObject:
        return self.kenning.predictor.status()

    def predictor_training(self, *, limit: int = 50, offset: int = 0) -> TrainingHistory:
        return self.kenning.predictor.training_history(limit=limit, offset=offset)

    def predictor_audit(self, session_key: str) -> AuditReport:
        return self.kenning.predictor.audit(session_key)

    def predictor_train(self, *, base_weights: Path | None = None) -> ApiObject:
        """Train in this process: a sidecar runs for the duration of the command."""
        p = self.kenning.predictor
        p.sidecar.base_weights = str(base_weights) if base_weights else None
        if not p.cfg.enabled:
            raise ConfigError("the predictor is disabled in config.yaml (predictor.enabled: false)")
        p.start(wait_ready=True, force=True)
        return p.train_now("manual")

    def review_pending(self, *, status: str = "pending", project: str | None = None,
                       session_key: str | None = None, limit: int = 100) -> ReviewPage:
        return self.kenning.review.pending(status=status, project=project, session_key=session_key, limit=limit)

    def review_accept(self, memory_id: str) -> ReviewItem:
        return self.kenning.review.accept(memory_id, actor=REVIEW_ACTOR)

    def review_edit(self, memory_id: str, changes: dict[str, str]) -> ReviewItem:
        return self.kenning.review.edit(memory_id, content=changes.get("content"), type=changes.get("type"),
                                        actor=REVIEW_ACTOR)

    def review_reject(self, memory_id: str, *, reason: str | None = None) -> ReviewItem:
        return self.kenning.review.reject(memory_id, reason=reason, actor=REVIEW_ACTOR)

    def review_rules(self) -> RuleReport:
        return self.kenning.review.rules()

    def ingest_document(self, body: ApiObject, progress: DocumentProgress) -> DocumentView:
        """Submit and ingest in this process; a failure marks the document failed and is raised."""
        k = self.kenning
        doc_id = k.submit_document(
            text=body.get("text"), url=body.get("url"), title=body.get("title"), project=body.get("project"),
            tags=body.get("tags"), content_type=body.get("content_type"), enqueue=False,
        )
        try:
            k.ingest_document(doc_id, progress=progress)
        except Exception as exc:
            k.mark_document_failed(doc_id, str(exc))
            raise
        return k.document(doc_id)

    def ingest_git(self, repo: Path, project: str | None, progress: GitProgress) -> ApiObject:
        return self.kenning.git.ingest(repo, project, progress=progress).to_dict()


class DaemonBackend:
    """The running daemon, over its HTTP API (`kenning.client`). Where a call answers a TypedDict, the
    daemon's route answers that very TypedDict (the API returns what LocalBackend calls), so its JSON
    is taken as one (`cast`)."""

    def __init__(self, client: KenningClient) -> None:
        self.client = client
        self.where = f"daemon {client.base_url}"

    def close(self) -> None:
        self.client.close()

    def remember(self, body: ApiObject) -> ApiObject:
        return self.client.remember(body)

    def remember_batch(self, memories: list[ApiObject]) -> list[ApiObject]:
        return self.client.remember_batch(memories)

    def recall(self, body: ApiObject) -> list[HitView]:
        return cast("list[HitView]", self.client.recall(body))

    def recall_config(self, preset: str | None = None) -> ConfigExplained:
        return cast("ConfigExplained", self.client.recall_config(preset))  # the route answers that TypedDict

    def get(self, memory_id: str) -> MemoryView:
        return cast("MemoryView", self.client.get(memory_id))

    def edit(self, memory_id: str, changes: ApiObject) -> MemoryDict:
        return cast("MemoryDict", self.client.edit(memory_id, changes))

    def forget(self, memory_id: str, *, purge: bool = False, reason: str | None = None) -> Mapping[str, object]:
        return self.client.forget(memory_id, purge=purge, reason=reason)

    def recover(self, memory_id: str) -> MemoryDict:
        return cast("MemoryDict", self.client.recover(memory_id))

    def list(self, *, limit: int = 50, offset: int = 0, project: str | None = None, type: str | None = None,
             include_deleted: bool = False) -> ApiObject:
        return self.client.list(limit=limit, offset=offset, project=project, type=type,
                                include_deleted=include_deleted)

    def stats(self) -> StoreStats:
        return cast("StoreStats", self.client.stats())

    def export(self, fmt: str, project: str | None = None) -> Iterator[str]:
        return self.client.export(fmt, project)

    def sessions(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> SessionList:
        return cast("SessionList", self.client.sessions(limit=limit, offset=offset, project=project))

    def session(self, session_key: str) -> SessionDetail:
        return cast("SessionDetail", self.client.session(session_key))

    def entities(self, *, query: str | None = None, entity_type: str | None = None, limit: int = 50,
                 offset: int = 0) -> ApiObject:
        params = ({"limit": limit} | ({"offset": offset} if offset else {}) | ({"q": query} if query else {})
                  | ({"type": entity_type} if entity_type else {}))
        return self.client.request("GET", "/api/graph/entities", params=params)

    def entity(self, name: str, *, memories: int = 50) -> ApiObject:
        return self.client.request("GET", f"/api/graph/entity/{quote(name, safe='')}", params={"memories": memories})

    def pipeline_status(self) -> ApiObject:
        return self.client.request("GET", "/api/pipeline/status")

    def predictor_status(self) -> ApiObject:
        return self.client.request("GET", "/api/predictor/status")

    def predictor_training(self, *, limit: int = 50, offset: int = 0) -> TrainingHistory:
        return cast("TrainingHistory", self.client.request("GET", "/api/predictor/training",
                                                           params={"limit": limit, "offset": offset}))

    def predictor_audit(self, session_key: str) -> AuditReport:
        return cast("AuditReport", self.client.request("GET", f"/api/predictor/audit/{session_key}"))

    def predictor_train(self, *, base_weights: Path | None = None) -> ApiObject:
        if base_weights is not None:
            raise KenningError("--base-weights applies when the daemon is stopped (the running sidecar has its model)")
        return self.client.request("POST", "/api/predictor/train", timeout=180.0)

    def review_pending(self, *, status: str = "pending", project: str | None = None,
                       session_key: str | None = None, limit: int = 100) -> ReviewPage:
        params = {"status": status, "project": project, "session_key": session_key, "limit": limit}
        return cast("ReviewPage", self.client.request("GET", "/api/review",
                                                      params={k: v for k, v in params.items() if v is not None}))

    def review_accept(self, memory_id: str) -> ReviewItem:
        return cast("ReviewItem", self.client.request("POST", f"/api/review/{memory_id}/accept"))

    def review_edit(self, memory_id: str, changes: dict[str, str]) -> ReviewItem:
        return cast("ReviewItem", self.client.request("POST", f"/api/review/{memory_id}/edit", json=changes))

    def review_reject(self, memory_id: str, *, reason: str | None = None) -> ReviewItem:
        return cast("ReviewItem", self.client.request("POST", f"/api/review/{memory_id}/reject",
                                                      json={"reason": reason} if reason else {}))

    def review_rules(self) -> RuleReport:
        return cast("RuleReport", self.client.request("GET", "/api/review/rules"))

    def ingest_document(self, body: ApiObject, progress: DocumentProgress) -> DocumentView:
        """Queue it, then poll until the documents worker is done (or ingest it now when no worker
        takes it)."""
        doc = self.client.request("POST", "/api/documents", json=body)
        started = time.monotonic()
        nudged = False
        while time.monotonic() - started < DOCUMENT_MAX_WAIT_S:
            state = self.client.request("GET", f"/api/documents/{doc['id']}")
            progress(str(state["status"]), _count(state.get("memory_count")) or 0,
                     _count(state.get("chunk_count")) or 0)
            if state["status"] in ("done", "failed"):
                return cast("DocumentView", state)
            if state["status"] == "queued" and not nudged and time.monotonic() - started > DOCUMENT_QUEUED_GRACE_S:
                nudged = True  # no documents worker picked it up: ask the daemon to ingest it now
                self.client.request("POST", f"/api/documents/{doc['id']}/process", timeout=DOCUMENT_MAX_WAIT_S)
                continue
            time.sleep(DOCUMENT_POLL_S)
        raise KenningError(f"document {doc['id']} is still {state['status']} after {DOCUMENT_MAX_WAIT_S:.0f} s")

    def ingest_git(self, repo: Path, project: str | None, progress: GitProgress) -> ApiObject:
        run = self.client.request("POST", "/api/ingest/git", json={"path": str(repo), "project": project})
        while run["status"] == "running":
            progress(_count(run["done"]) or 0, _count(run["total"]) or None)
            time.sleep(GIT_POLL_S)
            run = self.client.request("GET", f"/api/ingest/git/{run['id']}")
        progress(_count(run["done"]) or 0, _count(run["total"]))
        return run


def _count(value: object) -> int | None:
    """A count from the daemon's JSON (None when it is not a number)."""
    return value if isinstance(value, int) else None


def nothing_listens(base_url: str) -> bool:
    """True when the daemon's address is on this machine and its port refuses connections: no daemon
    runs there, and the HTTP client need not be loaded to ask."""
    url = urlsplit(base_url)
    if url.hostname not in LOOPBACK:
        return False
    try:
        port = url.port or 80
    except ValueError:  # config.yaml's port is not a number: loading the settings says so in one line
        return True
    try:
        socket.create_connection((url.hostname, port), timeout=0.5).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def open_backend(settings: Callable[[], Settings], *, prefer_daemon: bool = True) -> LocalBackend | DaemonBackend:
    """The daemon when one listens where the hooks would find it (hooks.transport.daemon_endpoint reads the
    same KENNING_* variables and config.yaml without pydantic), else the local store (`settings()` is
    loaded only then). No health check first: each command is one round trip (issue 35)."""
    if prefer_daemon:
        from kenning.hooks.transport import daemon_endpoint

        base_url, token, _ = daemon_endpoint()
        if not nothing_listens(base_url):
            from kenning.client import KenningClient

            return DaemonBackend(KenningClient(base_url, token=token, timeout=120.0))
    return LocalBackend(settings())
