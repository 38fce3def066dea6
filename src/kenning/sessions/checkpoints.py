"""Checkpoints: redacted snapshots of a session's state, so a compaction or crash loses little.

Written on pre-compaction, on an explicit checkpoint, and periodically: every N prompts or
when M minutes have passed since the last one (both configurable, 0 disables). Each session
keeps at most `checkpoint_max_per_session` (oldest dropped); checkpoints older than the
retention window are purged whenever one is written. Secrets are redacted before storage.
"""

from __future__ import annotations

from datetime import timedelta

from kenning.core.clock import parse_iso, to_iso
from kenning.sessions.context import SessionDeps, bare_session
from kenning.core.secrets import redact
from kenning.store import sessions as store
from kenning.store.sessions import SessionRow

RECENT_PROMPTS = 5


def is_due(deps: SessionDeps, session: SessionRow, at: str) -> bool:
    cfg = deps.settings
    if cfg.checkpoint_prompt_interval and session.get("prompts_since_checkpoint", 0) >= cfg.checkpoint_prompt_interval:
        return True
    if cfg.checkpoint_interval_minutes and session.get("prompts_since_checkpoint", 0) > 0:
        last = session.get("last_checkpoint_at") or session.get("started_at")
        if last and parse_iso(at) - parse_iso(last) >= timedelta(minutes=cfg.checkpoint_interval_minutes):
            return True
    return False


def summary_text(deps: SessionDeps, session_key: str, context: str | None, trigger: str) -> str:
    """Checkpoint body: caller context, then the last prompts and what was injected."""
    conn = deps.db.reader()
    session = store.get_session(conn, session_key) or bare_session(session_key)
    prompts = store.session_prompts(conn, session_key)[-RECENT_PROMPTS:]
    injected = [r["memory_id"] for r in store.session_memories(conn, session_key) if r["was_injected"]]
    lines = [f"checkpoint ({trigger}) for session {session_key}"
             + (f" in {session['project']}" if session.get("project") else "")
             + f", {session.get('prompt_count', 0)} prompts so far"]
    if context:
        lines += ["", "context:", context.strip()]
    if prompts:
        lines += ["", "recent prompts:"] + [f"- {p['prompt'][:500]}" for p in prompts]
    if injected:
        lines += ["", "injected memories: " + ", ".join(injected[-40:])]
    return "\n".join(lines)


def write_checkpoint(deps: SessionDeps, session_key: str, at: str, *, trigger: str,
                     context: str | None = None) -> int:
    cfg = deps.settings
    text = redact(summary_text(deps, session_key, context, trigger))[: cfg.checkpoint_max_chars]
    purge_before = (
        to_iso(parse_iso(at) - timedelta(days=cfg.checkpoint_retention_days))
        if cfg.checkpoint_retention_days else None
    )
    with deps.db.with_write_tx() as conn:
        return store.add_checkpoint(
            conn, session_key, trigger, text, at, max_per_session=cfg.checkpoint_max_per_session,
            purge_before=purge_before,
        )


def maybe_checkpoint(deps: SessionDeps, session_key: str, at: str, *, trigger: str) -> int | None:
    session = store.get_session(deps.db.reader(), session_key)
    if session is None or not is_due(deps, session, at):
        return None
    return write_checkpoint(deps, session_key, at, trigger=trigger)
