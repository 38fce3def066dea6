"""Episodes: a session's transcript as recallable memories, raw-first.

At session end (and at pre-compaction) each exchange — a user turn with the assistant's
reply — or each turn (`sessions.episode_unit`) becomes an `episode` memory with the
session's key, its position in the transcript and the time it was said (the JSONL entry's
timestamp; the session's start when the transcript has none). An exchange that repeats a
stored memory of the project (cosine ≥ 0.95) is not stored again. Secrets are redacted; the
lossless transcript stays as it is. Stored through the service's normal write path, so
every write rule (secret scanning, linking) applies. Idempotent: a position already
stored for the session is never stored again. At most `episode_max_per_session` per
session; the rest stays in the transcript. Extracted facts and decisions are an overlay
on top (`sessions.summary`), never the only copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired

import numpy as np
from typing_extensions import TypedDict  # pydantic reads it (a hook route's response model) on Python 3.11

from kenning.core.clock import normalize_iso
from kenning.core.secrets import redact
from kenning.core.telemetry import record_error
from kenning.core.types import MemoryDraft
from kenning.sessions.context import SessionDeps
from kenning.sessions.transcript import Turn
from kenning.store import sessions as store
from kenning.store.sessions import SessionRow

EPISODE_TYPE = "episode"
EPISODE_SOURCE = "session-episode"
# an exchange this close to a stored memory of the project is a repeat; below 0.95 because the
# same text embedded alone or in a padded batch differs by up to 0.04 cosine (measured), and
# bench/longrun.py still saw repeats at 0.92 ("Done: 51 tests pass" vs "Done: 88 tests pass")
REPEAT_COSINE = 0.9
EPISODE_IMPORTANCE = 0.3  # below curated memories: session-start prefers them, recall still finds episodes
_LABEL = {"user": "User", "assistant": "Assistant"}


class EpisodesResult(TypedDict):
    """What storing a session's episodes did: how many were stored and skipped, the repeats dropped,
    the error when the write failed; `ids` (episode position -> memory id) for the extraction that
    follows, left out of the answers (end.summarize, end.compaction_episodes)."""
    stored: int
    skipped: int
    repeats: NotRequired[int]
    error: NotRequired[str]
    ids: NotRequired[dict[int, str]]


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


def _groups(turns: list[Turn], unit: str) -> list[list[int]]:
    """Turn indexes per episode: exchanges (a user turn and the replies after it) or single turns."""
    groups: list[list[int]] = []
    for index, turn in enumerate(turns):
        if turn.role not in _LABEL or not turn.text.strip():
            continue
        if unit == "turn" or not groups or turn.role == "user":
            groups.append([index])
        else:
            groups[-1].append(index)
    return groups


def turn_positions(turns: list[Turn], unit: str) -> list[int | None]:
    """For each turn, the position of the episode that holds it (None for tool turns)."""
    positions: list[int | None] = [None] * len(turns)
    for position, group in enumerate(_groups(turns, unit)):
        for index in group:
            positions[index] = position
    return positions


def split_episodes(turns: list[Turn], unit: str, max_chars: int) -> list[Episode]:
    """Episodes in transcript order, redacted and cut to `max_chars`."""
    episodes = []
    for position, group in enumerate(_groups(turns, unit)):
        text = "\n".join(f"{_LABEL[turns[i].role]}: {turns[i].text.strip()}" for i in group)
        if len(text) > max_chars:
            text = text[: max_chars - 1] + "…"
        episodes.append(Episode(position, redact(text), _time(turns[group[0]].at)))
    return episodes


def store_episodes(deps: SessionDeps, session: SessionRow, turns: list[Turn], at: str) -> EpisodesResult:
    """Store the session's not-yet-stored episodes; {"stored": n, "skipped": n, "ids": {position: id}}."""
    cfg = deps.settings
    key = session["session_key"]
    if not cfg.episodes or deps.remember_many is None:
        return {"stored": 0, "skipped": 0, "ids": {}}
    episodes = split_episodes(turns, cfg.episode_unit, cfg.episode_max_chars)[: cfg.episode_max_per_session]
    known = store.episode_ids(deps.db.reader(), key)
    fresh = [e for e in episodes if e.position not in known]
    fresh, repeats = _drop_repeats(deps, session.get("project"), fresh)
    fallback = session.get("started_at") or at
    drafts = [
        MemoryDraft(
            content=e.text, type=EPISODE_TYPE, type_explicit=True, importance=EPISODE_IMPORTANCE, confidence=1.0,
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
    return {"stored": len(drafts), "skipped": len(episodes) - len(drafts), "repeats": repeats, "ids": ids}


def _drop_repeats(deps: SessionDeps, project: str | None, episodes: list[Episode]) -> tuple[list[Episode], int]:
    """Episodes that are not a near-duplicate (cosine ≥ REPEAT_COSINE) of a live memory of the
    project or of an earlier episode of this batch: a repeated exchange ("run the tests" / "done")
    adds nothing the store does not hold; the transcript keeps it."""
    if not episodes:
        return episodes, 0
    vectors = np.asarray(deps.embedder.embed_many([e.text for e in episodes]), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    conn = deps.db.reader()
    kept: list[Episode] = []
    kept_vectors: list[np.ndarray] = []
    for episode, vector in zip(episodes, vectors):
        nearest = store.top_by_similarity(conn, vector, deps.embedder.model_id, project=project, at=None, limit=1)
        if (nearest and nearest[0][1] >= REPEAT_COSINE) or any(float(v @ vector) >= REPEAT_COSINE for v in kept_vectors):
            continue
        kept.append(episode)
        kept_vectors.append(vector)
    return kept, len(episodes) - len(kept)
