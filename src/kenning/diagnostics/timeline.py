"""One time-ordered story for a session key or a memory id.

Interleaves memory_history, jobs, the session's own lifecycle rows, structured logs, the
error ring and predictor events (scored, prefilter, diversity, fts_overlap, comparison,
trained, drift_reset) — seed §4.4. Each event: {at, source, event, summary, details}.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypedDict

from kenning.core import telemetry
from kenning.core.clock import parse_iso, to_iso
from kenning.core.errors import InvalidInput, NotFound
from kenning.store import timeline as sql
from kenning.store.sessions import SessionMemoryRecord
from kenning.store.backend import Connection, StoreDatabase

SOURCES = ("session", "history", "job", "log", "error", "predictor")
# A training run that a session's end triggers lands shortly after the session ended.
TRAINING_GRACE = timedelta(minutes=15)
_PREDICTOR_LOG = {
    "predictor.score": "scored", "predictor.prefilter": "prefilter", "predictor.diversity": "diversity",
    "predictor.fts_overlap": "fts_overlap", "predictor.compare": "comparison",
    "predictor.train": "trained", "predictor.drift_reset": "drift_reset",
    "predictor.ema_update": "ema_update", "predictor.ema_skip": "ema_skip",
    "predictor.timeout": "timeout", "predictor.crash": "crash",
}


class Event(TypedDict):
    """One timeline event: when, which source (SOURCES), what, a line, and the row it came from."""

    at: str | None
    source: str
    event: str
    summary: str
    details: dict[str, object]


class Timeline(TypedDict):
    id: str
    kind: str  # "session" | "memory"
    entities: list[sql.MentionedEntity]
    total: int
    limit: int
    offset: int
    events: list[Event]


def _ev(_at: str | None, _source: str, _event: str, _summary: str, **details: object) -> Event:
    """One event; positional-only names so row columns like `source` can ride in details."""
    return {"at": _at, "source": _source, "event": _event, "summary": _summary, "details": details}


def _json(value: object) -> object:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _history_events(rows: list[sql.HistoryRow]) -> list[Event]:
    out = []
    for h in rows:
        text = h.get("new_content") or h.get("old_content") or h.get("memory_content") or ""
        out.append(_ev(
            h["created_at"], "history", h["event"],
            f"{h['event']} {h['memory_id']}: {text[:80]}",
            memory_id=h["memory_id"], actor=h.get("actor"), reason=h.get("reason"),
            changes=_json(h.get("changes")),
        ))
    return out


def _job_events(rows: list[sql.JobRecord]) -> list[Event]:
    out = []
    for j in rows:
        kind = j.get("job_type") or "job"
        details = {k: _json(v) for k, v in j.items() if k not in ("created_at",)}
        out.append(_ev(j.get("created_at"), "job", "enqueued", f"{kind} job #{j['id']} enqueued", **details))
        done = j.get("completed_at") or j.get("failed_at") or (
            j.get("updated_at") if j.get("status") != "pending" else None)
        if done and done != j.get("created_at"):
            status, error = j.get("status"), j.get("last_error")
            msg = f"{kind} job #{j['id']} {status}" + (f": {error}" if error else "")
            out.append(_ev(done, "job", str(status), msg, id=j["id"], table=j["table"], error=error))
    return out


def _mentions(entry: Mapping[str, object], ident: str) -> bool:
    fields = [v for k, v in entry.items() if k not in ("at", "level", "category")]
    return any(ident == v or (isinstance(v, (list, tuple)) and ident in v) for v in fields) or \
        any(isinstance(v, dict) and ident in v.values() for v in fields)


def _telemetry_events(ident: str) -> list[Event]:
    out = []
    for e in telemetry.recent_errors():
        if _mentions(e["context"], ident):
            out.append(_ev(e["at"], "error", e["stage"], e["message"], **e["context"]))
    for entry in telemetry.recent_logs(limit=telemetry.LOG_RING_SIZE):
        if entry["category"] == "error" or not _mentions(entry, ident):
            continue
        fields = {k: v for k, v in entry.items() if k not in ("at", "category", "message")}
        at, category, message = str(entry["at"]), str(entry["category"]), str(entry["message"])  # log_event's strings
        name = _PREDICTOR_LOG.get(message) or _PREDICTOR_LOG.get(str(entry.get("event")))
        if category == "predictor" and name:
            out.append(_ev(at, "predictor", name, message, **fields))
        else:
            out.append(_ev(at, "log", category, message, **fields))
    return out


def _candidate_events(key: str, rows: list[SessionMemoryRecord]) -> list[Event]:
    if not rows:
        return []
    start_rows = [r for r in rows if r.get("source") != "fts_only"]
    out = []
    if start_rows:
        at = min(r["created_at"] for r in start_rows)
        injected = [r for r in start_rows if r.get("was_injected")]
        scored = [r for r in start_rows if r.get("predictor_score") is not None]
        top = min(start_rows, key=lambda r: r["rank"])
        out.append(_ev(at, "predictor", "prefilter", f"{len(start_rows)} candidates considered",
                       candidates=len(start_rows),
                       sources=sorted({r.get("source") for r in start_rows if r.get("source")})))
        out.append(_ev(at, "predictor", "scored",
                       f"{len(injected)} of {len(start_rows)} injected; top pick {top['memory_id']}",
                       candidates=len(start_rows), predictor_scored=len(scored), injected=len(injected),
                       top_pick=top["memory_id"]))
    attenuated = [r for r in start_rows if (factor := r.get("diversity_factor")) is not None and factor < 1]
    if attenuated:
        out.append(_ev(min(r["created_at"] for r in attenuated), "predictor", "diversity",
                       f"topic diversity attenuated {len(attenuated)} candidate(s)",
                       attenuated=len(attenuated), memory_ids=[r["memory_id"] for r in attenuated][:20]))
    fts_only = [r for r in rows if r.get("source") == "fts_only"]
    matched = [r for r in start_rows if r.get("was_injected") and (r.get("fts_hit_count") or 0) > 0]
    if fts_only or matched:
        at = max(r["created_at"] for r in (fts_only or matched))
        injected_total = sum(1 for r in start_rows if r.get("was_injected"))
        out.append(_ev(at, "predictor", "fts_overlap",
                       f"{len(matched)}/{injected_total} injected matched by search; {len(fts_only)} fts-only",
                       session_key=key, injected_matched=len(matched), injected_total=injected_total,
                       fts_only_inserts=len(fts_only)))
    return out


def _session_events(conn: Connection, key: str) -> tuple[list[Event], str | None, str | None]:
    out: list[Event] = []
    row = sql.session_row(conn, key)
    start = end = None
    if row:
        start, end = row.get("started_at"), row.get("ended_at")
        out.append(_ev(start, "session", "started", f"session started ({row.get('harness') or 'harness?'}, "
                       f"{row.get('project') or 'no project'})", **row))
        if end:
            out.append(_ev(end, "session", "ended", f"session ended after {row.get('prompt_count', 0)} prompts",
                           status=row.get("status")))
    for cp in sql.session_checkpoints(conn, key):
        out.append(_ev(cp["created_at"], "session", "checkpoint", f"checkpoint ({cp['trigger']}, {cp['chars']} chars)",
                       **cp))
    score = sql.session_score(conn, key)
    if score:
        out.append(_ev(score["created_at"], "session", "continuity_scored",
                       f"continuity {score['score']:.2f} (confidence {score['confidence']:.2f}, {score.get('judge')})",
                       **{k: _json(v) for k, v in score.items()}))
    candidates = sql.session_candidates(conn, key)
    out += _candidate_events(key, candidates)
    for c in sql.comparisons_for(conn, key):
        margin = c.get("margin") or 0
        winner = "tie" if margin == 0 else ("predictor" if margin > 0 else "baseline")
        out.append(_ev(c.get("created_at"), "predictor", "comparison",
                       f"{winner} won (predictor NDCG {c.get('predictor_ndcg')}, baseline {c.get('baseline_ndcg')})",
                       **{k: _json(v) for k, v in c.items()}))
    window_end = to_iso(parse_iso(end) + TRAINING_GRACE) if end else None
    for t in sql.trainings_between(conn, key, start, window_end):
        drift = t.get("trigger") == "drift_reset"
        out.append(_ev(t.get("created_at"), "predictor", "drift_reset" if drift else "trained",
                       f"model v{t.get('model_version', '?')} trained (loss {t.get('loss')})",
                       **{k: _json(v) for k, v in t.items()}))
    return out, start, end


def _merge_predictor_logs(stored: list[Event], logged: list[Event]) -> list[Event]:
    """A predictor event known from the tables absorbs the log line of the same name (no duplicates)."""
    from_tables = {e["event"]: e for e in stored if e["source"] == "predictor"}
    out = list(stored)
    for e in logged:
        twin = from_tables.get(e["event"]) if e["source"] == "predictor" else None
        if twin is None:
            out.append(e)
        else:
            twin["details"] = {**e["details"], **twin["details"]}
    return out


def build_timeline(
    db: StoreDatabase, ident: str, *, source: str | None = None, limit: int = 500, offset: int = 0
) -> Timeline:
    if not ident or len(ident) > 200:
        raise InvalidInput("timeline id must be a session key or memory id (1-200 chars)")
    if source is not None and source not in SOURCES:
        raise InvalidInput(f"unknown source {source!r}; one of: {', '.join(SOURCES)}")
    if limit < 1 or limit > 2000 or offset < 0:
        raise InvalidInput("limit must be 1-2000 and offset >= 0")
    with db.snapshot() as conn:
        is_memory = sql.memory_exists(conn, ident)
        is_session = sql.session_exists(conn, ident)
        if not (is_memory or is_session):
            raise NotFound(f"no session or memory with id {ident!r}")
        events: list[Event] = []
        entities = sql.memory_entities(conn, ident) if is_memory else []
        if is_memory:
            events += _history_events(sql.memory_history(conn, ident))
            for sm in sql.memory_sessions(conn, ident):
                verb = "injected" if sm.get("was_injected") else "considered"
                events.append(_ev(sm["created_at"], "session", verb,
                                  f"{verb} in session {sm['session_key']} at rank {sm['rank']}", **sm))
        if is_session:
            session_events, _, _ = _session_events(conn, ident)
            events += session_events + _history_events(sql.session_history(conn, ident))
        events += _job_events(sql.jobs_for(conn, ident))
    events = _merge_predictor_logs(events, _telemetry_events(ident))
    events = [e for e in events if e["at"]]
    events.sort(key=lambda e: (e["at"], SOURCES.index(e["source"])))
    if source:
        events = [e for e in events if e["source"] == source]
    return {
        "id": ident,
        "kind": "session" if is_session else "memory",
        "entities": entities,
        "total": len(events),
        "limit": limit,
        "offset": offset,
        "events": events[offset:offset + limit],
    }
