"""Episodes: a session's transcript as recallable memories, raw-first.

At session end (and at pre-compaction) each exchange — a user turn with the assistant's
reply — or each turn (`sessions.episode_unit`) becomes an `episode` memory with the
session's key, its position in the transcript and the time it was said (the JSONL entry's
timestamp; the session's start when the transcript has none). Secrets are redacted; the
lossless transcript stays as it is. Stored through the service's normal write path, so
every write rule (secret scanning, linking) applies. Idempotent: a position already
stored for the session is never stored again. At most `episode_max_per_session` per
session; the rest stays in the transcript. Extracted facts and decisions are an overlay
on top (`sessions.summary`), never the only copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kenning.core.clock import normalize_iso
from kenning.core.secrets import redact
from kenning.core.telemetry import record_error
from kenning.core.types import MemoryDraft
from kenning.sessions.context import SessionDeps
from kenning.sessions.transcript import Turn
from kenning.store import sessions as store

EPISODE_TYPE = "episode"
EPISODE_SOURCE = "session-episode"
EPISODE_IMPORTANCE = 0.3  # below curated memories: session-start prefers them, recall still finds episodes
_LABEL = {"user": "User", "assistant": "Assistant"}


@dataclass
class Episode:
    position: int
    text: str
    at: str | None


def _time(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return normalize_iso(value)
    except Exception:  # a malformed timestamp in a transcript falls back to the session's time
        return None


def split_episodes(turns: list[Turn], unit: str, max_chars: int) -> list[Episode]:
    """Episodes in transcript order: exchanges (a user turn and what follows) or single turns."""
    spoken = [t for t in turns if t.role in _LABEL and t.text.strip()]
    groups: list[list[Turn]] = []
    for turn in spoken:
        if unit == "turn" or not groups or turn.role == "user":
            groups.append([turn])
        else:
            groups[-1].append(turn)
    episodes = []
    for position, group in enumerate(groups):
        text = "\n".join(f"{_LABEL[t.role]}: {t.text.strip()}" for t in group)
        if len(text) > max_chars:
            text = text[: max_chars - 1] + "…"
        episodes.append(Episode(position, redact(text), _time(group[0].at)))
    return episodes


def store_episodes(deps: SessionDeps, session: dict[str, Any], turns: list[Turn], at: str) -> dict[str, Any]:
    """Store the session's not-yet-stored episodes; {"stored": n, "skipped": n, "ids": {position: id}}."""
    cfg = deps.settings
    key = session["session_key"]
    if not cfg.episodes or deps.remember_many is None:
        return {"stored": 0, "skipped": 0, "ids": {}}
    episodes = split_episodes(turns, cfg.episode_unit, cfg.episode_max_chars)[: cfg.episode_max_per_session]
    known = store.episode_ids(deps.db.reader(), key)
    fresh = [e for e in episodes if e.position not in known]
    fallback = session.get("started_at") or at
    drafts = [
        MemoryDraft(
            content=e.text, type=EPISODE_TYPE, importance=EPISODE_IMPORTANCE, confidence=1.0,
            project=session.get("project"), source=EPISODE_SOURCE, session_key=key, tags=["episode"],
            created_at=e.at or fallback, metadata={"episode_position": e.position},
        )
        for e in fresh
    ]
    ids = dict(known)
    if drafts:
        try:
            for episode, result in zip(fresh, deps.remember_many(drafts)):
                ids[episode.position] = result.id
        except Exception as exc:  # episodes are an overlay on the lossless transcript: never fail the job
            record_error("sessions", f"episodes not stored: {exc}", session_key=key)
            return {"stored": 0, "skipped": len(episodes), "ids": ids, "error": str(exc)}
    return {"stored": len(drafts), "skipped": len(episodes) - len(drafts), "ids": ids}
