"""Review, the trust moment (issue 22): what kenning learned by itself, grouped by the session it
came from, with accept / edit / reject.

- **accept**: the user vouches for it: `needs_review` off, `user_verified` on (a standing rule
  from now on), `metadata.review` = {status: accepted, at, by};
- **edit**: new content (and/or type), then accepted as above (`status: edited`);
- **reject**: non-destructive: the memory stays (a query still finds it, `kenning show` shows
  it) but it is never shown unasked again; `metadata.review` = {status: rejected, at, by,
  reason}; undone by accepting it.
A rule whose code was deleted or renamed (issue 31: `stale_at`, `metadata.stale` = {commit, path, symbol,
reason}) is pending until the user confirms it (accept: `stale_at` cleared, the evidence kept in its history),
edits it (cleared too) or retires it (reject).
Every action goes through the write path (`edit`: history row, re-embedding on new content).
`rules()` counts per extraction rule (`metadata.claim.rule`, else the writer's source) how many
were learned, wait, were accepted and rejected, so a noisy rule shows itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypedDict

from kenning.core.clock import now_iso
from kenning.core.errors import InvalidInput
from kenning.core.types import Memory, Viewer
from kenning.core.written import kind_of
from kenning.store import review as store
from kenning.store.backend import StoreDatabase

EditFn = Callable[..., Memory]  # service.edit(memory_id, changes, *, actor, reason, viewer)
MAX_LIMIT = 500


class ReviewItem(TypedDict):
    """A learned memory as review shows it (`item`)."""

    id: str
    content: str
    type: str
    confidence: float
    needs_review: bool
    user_verified: bool
    source: str | None
    project: str | None
    session_key: str | None
    created_at: str
    stale: dict[str, object] | None  # metadata.stale while stale_at is set: {commit, path, symbol, reason}
    rule: str | None
    evidence: dict[str, object] | None  # metadata.claim: rule, speaker, acceptance, ...
    review: dict[str, object] | None  # metadata.review: status, at, by, reason
    kind: str  # core.written: episode | claim | commit | note


class ReviewSession(TypedDict):
    session_key: str | None
    harness: str | None
    started_at: str | None
    project: str | None
    task: str | None
    memories: list[ReviewItem]


class ReviewPage(TypedDict):
    status: str
    total: int
    limit: int
    offset: int
    sessions: list[ReviewSession]


class RuleRow(TypedDict):
    """One extraction rule's memories: learned / pending / accepted / rejected, and the rejected share."""

    rule: str
    learned: int
    pending: int
    accepted: int
    rejected: int
    rejected_share: float | None


class RuleReport(TypedDict):
    rules: list[RuleRow]
    rejected: int
    pending: int


class Review:
    def __init__(self, db: StoreDatabase, edit: EditFn, get: Callable[..., Memory]) -> None:
        self.db, self._edit, self._get = db, edit, get

    def pending(self, *, status: str = "pending", project: str | None = None, session_key: str | None = None,
                limit: int = 100, offset: int = 0, viewer: Viewer | None = None) -> ReviewPage:
        """{sessions: [{session_key, harness, started_at, task, memories: [...]}], total, status}."""
        if status not in store.STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(store.STATUSES)}")
        if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be 1..{MAX_LIMIT}")
        if not isinstance(offset, int) or offset < 0:
            raise InvalidInput("offset must be a non-negative integer")
        rows, total = store.list_learned(self.db.reader(), status=status, project=project, session_key=session_key,
                                         viewer=viewer, limit=limit, offset=offset)
        groups: dict[str, ReviewSession] = {}
        for row in rows:
            memory, session = row["memory"], row["session"]
            key = memory.session_key or ""
            group = groups.get(key)
            if group is None:
                group = groups[key] = {
                    "session_key": memory.session_key, "harness": session["harness"] if session else None,
                    "started_at": session["started_at"] if session else None, "project": memory.project,
                    "task": _task(session), "memories": [],
                }
            group["memories"].append(item(memory))
        return {"status": status, "total": total, "limit": limit, "offset": offset, "sessions": list(groups.values())}

    def accept(self, memory_id: str, *, actor: str = "review", viewer: Viewer | None = None) -> ReviewItem:
        memory = self._get(memory_id, viewer)
        changes = {"needs_review": False, "user_verified": True, "stale_at": None,
                   "metadata": _with_review(memory, "accepted", actor)}
        return item(self._edit(memory_id, changes, actor=actor, reason="review: accepted", viewer=viewer))

    def edit(self, memory_id: str, *, content: str | None = None, type: str | None = None, actor: str = "review",
             viewer: Viewer | None = None) -> ReviewItem:
        if content is None and type is None:
            raise InvalidInput("an edit needs content or type")
        if content is not None and (not isinstance(content, str) or not content.strip()):
            raise InvalidInput("content must be a non-empty string")
        memory = self._get(memory_id, viewer)
        changes: dict[str, object] = {"needs_review": False, "user_verified": True, "stale_at": None,
                                      "metadata": _with_review(memory, "edited", actor)}
        if content is not None:
            changes["content"] = content.strip()
        if type is not None:
            changes["type"] = type
        return item(self._edit(memory_id, changes, actor=actor, reason="review: edited", viewer=viewer))

    def reject(self, memory_id: str, *, reason: str | None = None, actor: str = "review",
               viewer: Viewer | None = None) -> ReviewItem:
        if reason is not None and (not isinstance(reason, str) or len(reason) > 500):
            raise InvalidInput("reason must be a string of at most 500 characters")
        memory = self._get(memory_id, viewer)
        changes = {"user_verified": False, "metadata": _with_review(memory, "rejected", actor, reason)}
        return item(self._edit(memory_id, changes, actor=actor, reason="review: rejected", viewer=viewer))

    def sessions(self, session_keys: list[str], viewer: Viewer | None = None) -> dict[str, dict[str, store.SessionAbout]]:
        """What each session was about (its task: first prompt, else context) and what it taught; a
        team server's user sees only their own sessions."""
        if not isinstance(session_keys, list) or len(session_keys) > 200:
            raise InvalidInput("give at most 200 session keys")
        owner = viewer.user if viewer is not None and not viewer.sees_all else None
        about = store.session_about(self.db.reader(), session_keys, owner)
        for value in about.values():
            value["task"] = _task(value)
        return {"sessions": about}

    def rules(self) -> RuleReport:
        """Per extraction rule: learned / pending / accepted / rejected, and the rejected share of
        what was reviewed (the noisy rules first)."""
        counts = store.rule_counts(self.db.reader())
        out: list[RuleRow] = []
        for rule, c in counts.items():
            reviewed = c["accepted"] + c["rejected"]
            out.append({"rule": rule, "learned": c["learned"], "pending": c["pending"], "accepted": c["accepted"],
                        "rejected": c["rejected"], "rejected_share": round(c["rejected"] / reviewed, 4) if reviewed else None})
        out.sort(key=lambda r: (-(r["rejected_share"] or 0.0), -r["rejected"], r["rule"]))
        return {"rules": out, "rejected": sum(r["rejected"] for r in out), "pending": sum(r["pending"] for r in out)}


def _task(session: Mapping[str, object] | None) -> str | None:
    if not session:
        return None
    text = session.get("first_prompt") or session.get("context")
    return " ".join(text.split())[:300] if isinstance(text, str) and text else None


def _with_review(memory: Memory, status: str, actor: str, reason: str | None = None) -> dict[str, object]:
    review = {"status": status, "at": now_iso(), "by": actor}
    if reason:
        review["reason"] = reason
    return {**(memory.metadata or {}), "review": review, "reviewed_at": review["at"]}


def item(memory: Memory) -> ReviewItem:
    """A learned memory as review shows it: content, type, confidence and the evidence behind it."""
    meta = memory.metadata or {}
    claim = meta.get("claim") if isinstance(meta.get("claim"), dict) else None
    return {
        "id": memory.id, "content": memory.content, "type": memory.type, "confidence": memory.confidence,
        "needs_review": memory.needs_review, "user_verified": memory.user_verified, "source": memory.source,
        "project": memory.project, "session_key": memory.session_key, "created_at": memory.created_at,
        "stale": meta.get("stale") if memory.stale_at and isinstance(meta.get("stale"), dict) else None,
        "rule": (claim or {}).get("rule") or memory.source, "evidence": claim,
        "review": meta.get("review") if isinstance(meta.get("review"), dict) else None,
        "kind": kind_of(memory.source, claim is not None),
    }
