"""Session-end promotion (memory-system-v4 section 5) and threshold synthesis (section 12).

From the scratchpad's signal summary, in order: persist the summary and the cross-session
index (one small write tx) → frequency filter (minimum sessions per class, counted across
persisted summaries) → candidates (deterministic template, or one LLM synthesis call when a
provider is configured) → trust gate (after WebFetch/WebSearch: confidence × penalty,
needs_review, flagged) → session-type cap by priority → identity / novelty filter (same
observer key, or cosine > threshold to a live memory ⇒ reinforce it) → one batched write
through the normal write path. No embedding or LLM call runs inside a write transaction.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TypedDict, cast

import numpy as np

from kenning.core.clock import now_iso
from kenning.core.telemetry import log_event, record_error
from kenning.core.text import normalize_content
from kenning.core.types import MemoryDraft
from kenning.observer.deps import ObserverDeps
from kenning.observer.scratchpad import Scratchpad, Signal
from kenning.observer.signals import DISCARD_BELOW, TAXONOMY
from kenning.observer.templates import SignalDetail, render
from kenning.store import observer as store
from kenning.store.observer import SessionOutcome
from kenning.store.vectors import knn

SYNTHESIZED = {"co_access", "file_access"}  # promoted by threshold synthesis, not per session
REINFORCE_STEP = 0.05
REINFORCE_CAP = 0.95


@dataclass
class Candidate:
    signal: Signal
    type: str
    content: str
    sessions: list[str]
    confidence: float
    priority: float
    lookup_keys: list[str] = field(default_factory=list)

    @property
    def identity(self) -> str:
        return self.lookup_keys[0]


def lookup_keys(signal: Signal) -> list[str]:
    keys = [f"obs:{signal.signal_class}:{signal.key}"[:500]]
    if signal.signal_class == "error_retry":
        keys.append(f"error:{signal.key}")
    if signal.signal_class in ("repeated_grep", "glob_ignore"):
        keys.append(f"search:{signal.key}"[:500])
    return keys


def min_sessions(deps: ObserverDeps, signal_class: str) -> int:
    return int(deps.settings.min_sessions.get(signal_class, TAXONOMY[signal_class].min_sessions))


def score(signal_class: str, sessions: int, minimum: int) -> float:
    """Signal score, raised a little by each supporting session past the minimum (capped 0.95)."""
    return min(REINFORCE_CAP, TAXONOMY[signal_class].score + 0.03 * max(0, sessions - minimum))


def _candidate(deps: ObserverDeps, signal: Signal, sessions: list[str], memory_type: str | None = None) -> Candidate:
    cls = TAXONOMY[signal.signal_class]
    confidence = score(signal.signal_class, len(sessions), min_sessions(deps, signal.signal_class))
    if signal.contaminated:
        confidence *= deps.settings.trust_penalty
    content = render(signal.signal_class, signal.key, signal.files, cast(SignalDetail, signal.detail), len(sessions))
    return Candidate(signal, memory_type or cls.promotes_to[0], content, sessions, round(confidence, 4),
                     cls.score * (1 + math.log(len(sessions))), lookup_keys(signal))


def _draft(c: Candidate, project: str | None, session_key: str) -> MemoryDraft:
    s = c.signal
    return MemoryDraft(
        content=c.content, type=c.type, importance=TAXONOMY[s.signal_class].score, confidence=c.confidence,
        tags=["observer", s.signal_class], project=project, source="observer", related_files=s.files[:8],
        session_key=session_key,
        metadata={"lookup_keys": c.lookup_keys, "supporting_sessions": c.sessions[-20:],
                  "observer": {"signal_class": s.signal_class, "key": s.key, "detail": s.detail,
                               "contaminated": s.contaminated},
                  **({"trust_flags": {"contaminated": True, "contamination_source": "web_fetch"}}
                     if s.contaminated else {})},
    )


def _synthesize(deps: ObserverDeps, candidates: list[Candidate]) -> None:
    """One LLM call rewriting the template texts into 1-3 sentences each; template kept on failure."""
    if deps.generate is None or not candidates:
        return
    items = [{"i": i, "type": c.type, "raw": c.content} for i, c in enumerate(candidates)]
    prompt = ("Rewrite each observed coding-agent pattern as a 1-3 sentence memory for future sessions. Keep "
              "file names, commands and error text exact. Answer with a JSON array of {\"i\": n, \"content\": "
              "\"...\"} only.\n" + json.dumps(items))
    try:
        answer = deps.generate(prompt)
        start, end = answer.find("["), answer.rfind("]")
        for item in json.loads(answer[start:end + 1]):
            i, text = int(item["i"]), str(item["content"]).strip()
            if 0 <= i < len(candidates) and 20 <= len(text) <= 2000:
                candidates[i].content = text
    except Exception as exc:  # synthesis is optional: the deterministic template stands
        record_error("observer", f"LLM synthesis failed, templates kept: {exc}")


def _novelty(deps: ObserverDeps, candidates: list[Candidate], project: str | None) -> dict[int, str]:
    """index → existing memory id for candidates that repeat a live memory (same key, or cosine > threshold)."""
    conn = deps.db.reader()
    matches: dict[int, str] = {}
    for i, c in enumerate(candidates):
        for key in c.lookup_keys:
            found = store.memory_for_key(conn, key, project)
            if found:
                matches[i] = found
                break
    rest = [i for i in range(len(candidates)) if i not in matches]
    if not rest:
        return matches
    vectors = deps.embedder.embed_many([normalize_content(candidates[i].content).storage for i in rest])
    for i, vector in zip(rest, np.asarray(vectors)):
        near = [(h, sim) for h, sim in knn(conn, vector, deps.embedder.model_id, 3) if sim > deps.settings.novelty_threshold]
        if near:
            ids = store.live_ids_for_hashes(conn, [h for h, _ in near], project)
            for h, _ in near:
                if h in ids:
                    matches[i] = ids[h]
                    break
    return matches


def _write(deps: ObserverDeps, candidates: list[Candidate], project: str | None, session_key: str,
           at: str) -> tuple[list[str], list[str]]:
    """Novelty filter, then one batched write; returns (promoted ids, reinforced ids)."""
    if not candidates:
        return [], []
    matches = _novelty(deps, candidates, project)
    fresh = [c for i, c in enumerate(candidates) if i not in matches]
    _synthesize(deps, fresh)
    results = deps.remember_many([_draft(c, project, session_key) for c in fresh]) if fresh else []
    promoted = [r.id for r in results if not r.deduped]
    reinforced = [matches[i] for i in sorted(matches)] + [r.id for r in results if r.deduped]
    flagged = [r.id for r, c in zip(results, fresh) if c.signal.contaminated and not r.deduped]
    with deps.db.with_write_tx() as conn:
        store.flag_for_review(conn, flagged, at)
        for i, memory_id in sorted(matches.items()):
            store.reinforce(conn, memory_id, session_key=session_key, signal_class=candidates[i].signal.signal_class,
                            step=REINFORCE_STEP, cap=REINFORCE_CAP, at=at)
    return promoted, reinforced


class Promotion(SessionOutcome):
    """`promote_session`'s answer: the recorded outcome, the session, candidates, threshold reached."""

    session_key: str
    candidates: int
    synthesis: int | None


class Synthesis(TypedDict):
    threshold: int | None
    promoted: list[str]
    reinforced: list[str]


def promote_session(deps: ObserverDeps, pad: Scratchpad, *, project: str | None, ab_group: str = "full",
                    at: str | None = None) -> Promotion:
    """Finalize one session's scratchpad into persisted signals and promoted memories."""
    at = at or now_iso()
    key = pad.session_key
    signals = [s for s in pad.finalize() if TAXONOMY[s.signal_class].score >= DISCARD_BELOW]
    edited = set(pad.edited_files())
    reader = deps.db.reader()
    rereads = store.files_seen_before(reader, project, [p for p, f in pad.files.items() if f["reads"]][:500])
    with deps.db.with_write_tx() as conn:
        store.add_signals(conn, key, project, [{"signal_class": s.signal_class, "key": s.key, "files": s.files,
                                                "detail": s.detail, "step": s.step, "contaminated": s.contaminated}
                                               for s in signals], at)
        store.bump_file_nodes(conn, project, {p: p in edited for p in list(pad.files)[:500]}, at)
        store.bump_edges(conn, project, [(s.files[0], s.files[1]) for s in signals
                                         if s.signal_class == "co_access" and len(s.files) >= 2], at)
        store.delete_scratchpad(conn, key)
    session_type = deps.settings.default_session_type or pad.derived_session_type()
    cap = int(deps.settings.promotion_caps.get(session_type, 3))
    candidates: list[Candidate] = []
    for signal in signals:
        if signal.signal_class in SYNTHESIZED:
            continue
        sessions = store.supporting_sessions(reader, project, signal.signal_class, signal.key)
        if len(sessions) >= min_sessions(deps, signal.signal_class):
            candidates.append(_candidate(deps, signal, sessions))
    candidates.sort(key=lambda c: -c.priority)
    candidates = candidates[:cap]
    promoted, reinforced = _write(deps, candidates, project, key, at)
    synthesized = synthesize_threshold(deps, project, key, at)
    row: SessionOutcome = {"project": project, "session_type": session_type, "ab_group": ab_group, "steps": pad.step,
           "tool_calls": pad.tool_calls, "file_rereads": rereads, "step_injections": len(pad.injected),
           "signals": len(signals), "promoted": promoted + synthesized["promoted"],
           "reinforced": reinforced + synthesized["reinforced"]}
    with deps.db.with_write_tx() as conn:
        store.save_session(conn, key, row, at)
    log_event("observer", "session promoted", session_key=key, signals=len(signals), promoted=len(row["promoted"]),
              reinforced=len(row["reinforced"]))
    return {**row, "session_key": key, "candidates": len(candidates), "synthesis": synthesized["threshold"]}


def synthesize_threshold(deps: ObserverDeps, project: str | None, session_key: str, at: str) -> Synthesis:
    """Mode 2: when the project's finished-session count (this one included) reaches a threshold,
    strong co-edit edges become causal_dependency memories (reinforced when already known)."""
    count = store.finished_sessions(deps.db.reader(), project) + 1
    threshold = next((t for t in sorted(deps.settings.synthesis_thresholds, reverse=True)
                      if count >= t and not store.synthesis_done(deps.db.reader(), project, t)), None)
    if threshold is None:
        return {"threshold": None, "promoted": [], "reinforced": []}
    minimum = min_sessions(deps, "co_access")
    edges = store.strong_edges(deps.db.reader(), project, minimum, deps.settings.co_access_min_ratio)
    candidates = []
    for edge in edges:
        signal = Signal("co_access", f"{edge.file_a}|{edge.file_b}", files=[edge.file_a, edge.file_b],
                        detail={"sessions": edge.edit_sessions})
        sessions = store.supporting_sessions(deps.db.reader(), project, "co_access", signal.key)
        candidates.append(_candidate(deps, signal, sessions or [session_key], "causal_dependency"))
    promoted, reinforced = _write(deps, candidates, project, session_key, at)
    with deps.db.with_write_tx() as conn:
        store.log_synthesis(conn, project, threshold, promoted + reinforced, at)
    return {"threshold": threshold, "promoted": promoted, "reinforced": reinforced}
