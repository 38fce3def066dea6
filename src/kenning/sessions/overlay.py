"""The extraction overlay on a session's episodes: decisions and rules, amendments, no self-pollution.

After the episodes are stored, the key facts of the transcript (`sessions.summary`: the claims
that pass `core.claims`) become memories — each derived from the episode it was said in
(`derived_from`), dated when it was said, typed by the claim test (decision / constraint /
preference / gotcha; no auto-protection), with its confidence and evidence (`metadata.claim`);
below the confidence gate it is written `needs_review`. With an LLM configured, the service's
`claim_gate` (pipeline.claim_gate) judges the candidates first — durable claim or chatter, type,
confidence — outside any transaction; what it calls chatter is not stored, and its confidence
replaces the rules' (evidence keeps both).
1. No self-pollution: a sentence that restates a memory shown to the session or already stored
   — cosine ≥ `RESTATEMENT_COSINE` to a live non-episode memory of the project, or one text
   containing the other — is not stored again.
2. Amendments: a new decision or rule supersedes the earlier decisions and rules of the project
   on the same subject (cosine ≥ `AMEND_COSINE` with amendment language, ≥ `SAME_RULE_COSINE`
   without), from other sessions, non-destructively (`superseded_by`, `valid_until`). Only an
   older memory loses, so supersession never forms a cycle. The live memories of the session
   that settled the stale rule (its episodes and other rules: the chat that holds the old
   subject) get `metadata.amended_by` (the list of the rules that amended it), so recall ranks
   them right after the amendments; an explicit amendment (`amends` 2) also marks the chat whose exchange is
   nearest to it when that chat's old rule lives in its exchanges only (`_amended_chats`).
3. An amendment whose text names no code ("Amended rule in full, superseding the original: …", said in a later
   chat that never names `merge_tags`) names the code of the rules it will supersede, before it is written
   (`_name_amended_code`): "`merge_tags`: Amended rule in full, …", area merge_tags; what was said stays as evidence.
Embeddings are computed before any transaction; the supersession writes happen in one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import numpy as np

from kenning.core import claims
from kenning.core.secrets import redact
from kenning.core.telemetry import record_error
from kenning.core.text import normalize_content
from kenning.core.types import Memory, MemoryDraft
from kenning.sessions.context import ClaimGateFn, SessionDeps
from kenning.sessions.episodes import EPISODE_TYPE
from kenning.sessions.summary import Fact, chat_code_names, key_facts, opening_task
from kenning.sessions.transcript import Turn
from kenning.store import codegraph as cgstore
from kenning.store import memories as mstore
from kenning.store import pipeline as pstore
from kenning.store import sessions as store
from kenning.store.backend import Connection
from kenning.store.sessions import SessionRow
from kenning.store.vectors import get_embeddings

SOURCE = "session-summary"
# a restatement: bench/longrun.py quotes and restated preferences are caught by containment or sit
# at ≥ 0.9; the sde dev split's amended rules sit at 0.60-0.68 from the rule they replace
RESTATEMENT_COSINE = 0.9
# how close an earlier rule must be to be superseded, by amendment level (summary.amendment_level):
# "amended rule, superseding …" 0.55; "instead / no longer …" 0.7; no such words 0.85 (measured on
# the sde dev split: amended pairs 0.60-0.68, unrelated rules of one project below 0.5)
SUPERSEDE_COSINE = {2: 0.55, 1: 0.7, 0: 0.85}
RULE_TYPES = ("decision", "constraint")


class StoredFact(TypedDict):
    """A key fact the extraction wrote (or found already stored: `deduped`)."""
    id: str
    deduped: bool
    type: str
    needs_review: bool
    rule: str | None  # the claim test's rule that kept it


class Extraction(TypedDict):
    """What the extraction overlay did (the summary job's `extraction`): `via` "key-facts" with the
    rest; "none" (no write path: `stored` only) or "skipped" (no transcript nor prompts: nothing else)."""
    via: str
    task: NotRequired[str | None]
    stored: NotRequired[list[StoredFact]]
    restatements: NotRequired[int]
    superseded: NotRequired[list[str]]
    gated_out: NotRequired[int]


@dataclass
class _Known:
    id: str
    normalized: str
    vector: np.ndarray | None


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _known_memories(deps: SessionDeps, session: SessionRow, vectors: np.ndarray) -> list[_Known]:
    """What a restatement could restate: the memories shown to the session and the project's
    nearest live non-episode memories to any candidate sentence."""
    conn = deps.db.reader()
    model = deps.embedder.model_id
    ids = [r["memory_id"] for r in store.session_memories(conn, session["session_key"]) if r["was_injected"]]
    for vector in vectors:
        ids += [m for m, _ in store.top_by_similarity(conn, vector, model, project=session.get("project"),
                                                       at=None, limit=10)]
    found = mstore.get_memories(conn, list(dict.fromkeys(ids)))
    memories = [m for m in found.values() if m.type != EPISODE_TYPE]
    stored = get_embeddings(conn, list({m.content_hash for m in memories}), model)
    return [_Known(m.id, m.normalized_content, stored.get(m.content_hash)) for m in memories]


def _restates(text: str, vector: np.ndarray, known: list[_Known], amends: int = 0) -> str | None:
    """The id of a known memory this sentence restates, or None. A sentence that says outright it
    amends a rule (`amends` 2: "Amended rule, superseding X: …") restates only what it contains word for
    word: it names the rule it replaces, so it sits close to it ("Settled: invoice-renderer uses ISO 8601
    strings in UTC for dates." vs its amendment to unix epoch milliseconds: cosine 0.93) and would be
    dropped as a restatement, leaving the stale rule live."""
    normalized = normalize_content(text).normalized
    for memory in known:
        if memory.normalized and (memory.normalized in normalized or normalized in memory.normalized):
            return memory.id
        if amends >= 2:
            continue
        if memory.vector is not None and float(np.dot(_unit(memory.vector[None, :])[0], vector)) >= RESTATEMENT_COSINE:
            return memory.id
    return None


_TOKEN = re.compile(r"\w[\w./-]*\w|\w")
_NAME = re.compile(r"^[a-z]\w*(?:[-_./]\w+)+$")  # a joined name: invoice-renderer, merge_records, app.db


def parallel_rules(a: str, b: str) -> bool:
    """The same rule about two different named things ("…: mail-digest uses unix epoch milliseconds …" and
    "…: invoice-renderer uses unix epoch milliseconds …"): word for word alike apart from names (joined
    words) each names and the other does not. Neither amends the other, however close their vectors."""
    wa, wb = _TOKEN.findall(a.lower()), _TOKEN.findall(b.lower())
    only_a = {w for w in wa if _NAME.match(w)} - set(wb)
    only_b = {w for w in wb if _NAME.match(w)} - set(wa)
    return bool(only_a and only_b) and [w for w in wa if w not in only_a] == [w for w in wb if w not in only_b]


@dataclass
class _Earlier:
    """The project's live rules from other sessions and their unit vectors (by content hash): read once per
    extraction, before the write, by the naming of amendments and by the supersession after it."""
    rules: list[Memory]
    vectors: dict[str, np.ndarray]


def _earlier_rules(deps: SessionDeps, session: SessionRow) -> _Earlier:
    conn = deps.db.reader()
    rules = store.live_rules(conn, session.get("project"), session["session_key"], list(RULE_TYPES))
    stored = get_embeddings(conn, list({m.content_hash for m in rules}), deps.embedder.model_id)
    return _Earlier(rules, {h: _unit(v[None, :])[0] for h, v in stored.items()})


def _supersedes(earlier: _Earlier, said: str, vector: np.ndarray, amends: int, at: str, new_id: str | None = None) -> list[Memory]:
    """The earlier rules a rule said at `at` (`said`: what was said, never the code it was named with) supersedes:
    older, at `SUPERSEDE_COSINE` of its amendment level, and not the same rule for another component."""
    need = SUPERSEDE_COSINE[amends]
    return [old for old in earlier.rules
            if old.id != new_id and old.created_at <= at and old.content_hash in earlier.vectors
            and not parallel_rules(old.content, said) and float(np.dot(earlier.vectors[old.content_hash], vector)) >= need]


def _said(fact: Fact) -> str:
    """The fact's text before `_name_amended_code` named its code ("`merge_tags`: " off): what its vector is of."""
    for cue in fact.evidence.get("cues", []):
        if isinstance(cue, str) and cue.startswith("amends-code:"):
            return fact.content.removeprefix(f"`{cue.removeprefix('amends-code:')}`: ")
    return fact.content


def _supersede_earlier(deps: SessionDeps, session: SessionRow, created: list[tuple[Fact, str, np.ndarray, str]],
                       earlier: _Earlier) -> list[str]:
    """Supersede the project's earlier rules on the same subjects; returns the superseded ids."""
    rules = [c for c in created if c[0].type in RULE_TYPES]
    if not rules:
        return []
    plan: dict[str, tuple[str, str, Memory]] = {}  # old id -> (new id, at, old memory)
    for fact, new_id, vector, at in rules:
        for old in _supersedes(earlier, _said(fact), vector, fact.amends, at, new_id):  # only an older memory loses
            if old.id not in plan or plan[old.id][1] < at:
                plan[old.id] = (new_id, at, old)
    chats = _amended_chats(deps, session, rules, {old.session_key for _, _, old in plan.values()})
    if not plan and not chats:
        return []
    with deps.db.with_write_tx() as wconn:
        for old_id, (new_id, at, old) in plan.items():
            if mstore.get_memory(wconn, new_id).superseded_by:
                continue
            pstore.supersede(wconn, old_id, new_id, reason="amended by a later decision on the same subject",
                             actor=SOURCE, at=at)
            _mark_amended(wconn, old, new_id)
        for exchange, new_id in chats:
            _mark_amended(wconn, exchange, new_id)
    return list(plan)


def _amended_chats(deps: SessionDeps, session: SessionRow, rules: list[tuple[Fact, str, np.ndarray, str]],
                   linked: set[str | None]) -> list[tuple[Memory, str]]:
    """(an exchange of the amended chat, the amendment's id) for each explicit amendment
    ("Amended rule in full, superseding the original: …"; `amends` 2) whose nearest earlier exchange of
    another session reaches `SUPERSEDE_COSINE[2]`, when no rule of that chat was superseded: the chat
    settled the old rule in its exchanges only (never extracted as one — bench/coding_memory.py's
    tagmerge family: "Yes — removed means removed" accepted the assistant's kill-list proposal), so nothing
    else tells recall that the chat is stale (`metadata.amended_by`). The exchange itself stays as said."""
    conn = deps.db.reader()
    out: list[tuple[Memory, str]] = []
    for fact, new_id, vector, at in rules:
        if fact.amends < 2:
            continue
        exchange = _amended_exchange(conn, deps.embedder.model_id, session, vector, at)
        if exchange is not None and exchange.session_key not in linked:
            out.append((exchange, new_id))
            linked.add(exchange.session_key)
    return out


def _amended_exchange(conn: Connection, model: str, session: SessionRow, vector: np.ndarray, at: str) -> Memory | None:
    """The nearest earlier exchange of another session of the project that an explicit amendment said at `at`
    reaches (`SUPERSEDE_COSINE[2]`), or None."""
    near = [m for m, c in store.top_by_similarity(conn, vector, model, project=session.get("project"), at=at, limit=10)
            if c >= SUPERSEDE_COSINE[2]]
    found = mstore.get_memories(conn, near)
    return next((found[m] for m in near if m in found and found[m].type == EPISODE_TYPE
                 and found[m].session_key not in (None, session["session_key"]) and found[m].created_at < at), None)


def _mark_amended(wconn: Connection, old: Memory, new_id: str) -> None:
    """The live memories recorded with `old` (its chat) hold a rule `new_id` amended (`metadata.amended_by`)."""
    for stale in store.stale_companions(wconn, old):  # the chat that settled the old rule
        amended = stale.metadata.get("amended_by") or []  # every later rule on its subjects
        amended = [*([amended] if isinstance(amended, str) else amended), new_id]
        mstore.update_memory(wconn, stale.id, {"metadata": {**stale.metadata, "amended_by": list(dict.fromkeys(amended))}},
                             actor=SOURCE, reason=f"holds a rule amended by {new_id}")


def store_key_facts(deps: SessionDeps, session: SessionRow, turns: list[Turn], prompts: list[str],
                    episode_of_turn: list[int | None], episode_ids: dict[int, str], at: str) -> Extraction:
    """Remember the session's key facts (derived from its episodes) and apply amendments."""
    key = session["session_key"]
    facts = key_facts(turns, prompts, deps.settings.summary_max_facts, _graph_names(deps, session, turns, prompts))
    task = opening_task(turns, prompts)
    gated = 0
    if facts and deps.claim_gate is not None:
        facts, gated = _gate(deps.claim_gate, facts, key)
    if not facts or deps.remember is None:
        return {"via": "key-facts", "task": task, "stored": [], "restatements": 0, "superseded": [], "gated_out": gated}
    vectors = _unit(np.asarray(deps.embedder.embed_many([f.content for f in facts]), dtype=np.float32))
    # what restates and what supersedes what are read from what was said (`vectors`): the named code never widens
    # them (two amendments of one project, "`merge_records`: Amended rule, …" and "`merge_tags`: Amended rule in full,
    # …", sit closer than what was said); the memory's own embedding is the write path's, of its stored text
    said = [f.content for f in facts]
    ats = [_said_at(f, turns, session, at) for f in facts]  # when each was said: its memory's created_at
    earlier = _earlier_rules(deps, session)  # read once: the naming below and the supersession after the write
    _name_amended_code(deps, session, facts, vectors, ats, earlier)
    known = _known_memories(deps, session, vectors)
    stored: list[StoredFact] = []
    created: list[tuple[Fact, str, np.ndarray, str]] = []
    restatements = 0
    for fact, vector, text, said_at in zip(facts, vectors, said, ats):
        if _restates(text, vector, known, fact.amends):
            restatements += 1
            continue
        position = episode_of_turn[fact.turn] if fact.turn is not None and fact.turn < len(episode_of_turn) else None
        source_id = episode_ids.get(position) if position is not None else None
        metadata: dict[str, Any] = {claims.EVIDENCE_KEY: fact.evidence}
        if fact.amends:
            metadata["amends"] = fact.amends
        draft = MemoryDraft(
            content=fact.content, type=fact.type, type_explicit=True, importance=fact.importance,
            confidence=fact.confidence, needs_review=fact.needs_review,
            project=session.get("project"), source=SOURCE, session_key=key, tags=["session-summary"],
            created_at=said_at, derived_from=[source_id] if source_id else [],
            metadata=metadata,
        )
        try:
            result = deps.remember(draft)
        except Exception as exc:  # one bad fact must not lose the others or the scoring
            record_error("sessions", f"summary fact not stored: {exc}", session_key=key)
            continue
        stored.append({"id": result.id, "deduped": result.deduped, "type": fact.type,
                       "needs_review": fact.needs_review, "rule": fact.evidence.get("rule")})
        known.append(_Known(result.id, normalize_content(fact.content).normalized, vector))
        if not result.deduped:
            created.append((fact, result.id, vector, mstore.get_memory(deps.db.reader(), result.id).created_at))
    superseded = _supersede_earlier(deps, session, created, earlier)
    return {"via": "key-facts", "task": task, "stored": stored, "restatements": restatements, "superseded": superseded,
            "gated_out": gated}


def _said_at(fact: Fact, turns: list[Turn], session: SessionRow, at: str) -> str:
    """When the fact was said (its turn's time, else the session's start, else `at`): its memory's created_at."""
    when = next((t.at for t in turns[fact.turn:fact.turn + 1] if t.at), None) if fact.turn is not None else None
    return when or session.get("started_at") or at


def _name_amended_code(deps: SessionDeps, session: SessionRow, facts: list[Fact], vectors: np.ndarray,
                       ats: list[str], earlier: _Earlier) -> None:
    """Name the code an amendment is about when its own text names none (issue 31): a later chat's "Amended rule in
    full, superseding the original: sources arrive highest precedence first; …" never says `merge_tags`, only the
    chat it amends does. Such a rule (not a project convention) takes the one code area of the earlier rules it
    will supersede (`_supersedes`, read before the write), or, for an explicit amendment (`amends` 2) that
    supersedes no rule, the code its nearest earlier exchange of another session names (`_amended_chats`'s
    chat; `claims.chat_subject`). The text becomes "`merge_tags`: Amended rule in full, …" (so its scope reads
    area merge_tags) and what was said stays as evidence (`metadata.claim.original`). The rest of a chat that
    amends one code area is about that area too: its other rules that name no code ("The natural fix: on a
    collision keep the record with MORE non-empty fields …", "Tombstones never appear in the output, …") take it."""
    todo = [i for i, f in enumerate(facts) if f.type in RULE_TYPES and not claims.names_own_code(f.content)
            and claims.scope_of(f.content).applies != "project"]
    if not todo:
        return
    conn = deps.db.reader()
    named: dict[int, str] = {}
    for i in todo:
        fact, vector, at = facts[i], vectors[i], ats[i]
        olds = _supersedes(earlier, fact.content, vector, fact.amends, at)
        areas = {old.area for old in olds if old.area and claims.names_own_code(f"`{old.area}`")}
        area = areas.pop() if len(areas) == 1 else None
        if not olds and fact.amends >= 2:
            exchange = _amended_exchange(conn, deps.embedder.model_id, session, vector, at)
            if exchange is not None:
                area = claims.chat_subject(claims.sentences(exchange.content))
        if area:
            named[i] = area
    amended = {area for i, area in named.items() if facts[i].amends}  # what the chat's amendments are about
    if len(amended) == 1:
        area = amended.pop()
        named.update({i: area for i in todo if i not in named})
    for i, area in named.items():
        fact = facts[i]
        fact.evidence = {**fact.evidence, "original": fact.evidence.get("original", fact.content),
                         "cues": [*fact.evidence.get("cues", []), f"amends-code:{area}"]}
        fact.content = f"`{area}`: {fact.content}"


def _graph_names(deps: SessionDeps, session: SessionRow, turns: list[Turn], prompts: list[str]) -> frozenset[str]:
    """The names the chat uses that the project's code graph defines (issue 31): a claim missing its subject
    is completed with them first, and its scope reads them as its area. Empty when the project is not indexed."""
    project = session.get("project")
    if not project:
        return frozenset()
    conn = deps.db.reader()
    if project not in cgstore.indexed_projects(conn):
        return frozenset()
    return frozenset(cgstore.defined_names(conn, project, chat_code_names(turns, prompts)))


def _gate(gate: ClaimGateFn, facts: list[Fact], key: str) -> tuple[list[Fact], int]:
    """The LLM claim gate over the rules' candidates; on failure the rules' verdicts stand."""
    try:
        verdicts = gate([{"id": str(i), "text": f.content, "type": f.type, "speaker": f.evidence.get("speaker"),
                          "rule": f.evidence.get("rule"), "antecedent": f.evidence.get("antecedent")}
                         for i, f in enumerate(facts)])
    except Exception as exc:  # an LLM failure falls back to the transparent rules
        record_error("sessions", f"LLM claim gate failed, rules kept: {exc}", session_key=key)
        return facts, 0
    kept: list[Fact] = []
    for i, fact in enumerate(facts):
        verdict = verdicts.get(str(i))
        if verdict is None:
            kept.append(fact)
            continue
        if not verdict["durable"]:
            continue
        fact.type = verdict["type"] if verdict["type"] in claims.RULE_TYPES else fact.type
        fact.confidence = round(claims.gated_confidence(fact.evidence, float(verdict["confidence"])), 3)
        fact.needs_review = fact.confidence < claims.REVIEW_BELOW
        fact.evidence = {**fact.evidence, "confidence": fact.confidence,
                         "llm": {"confidence": fact.confidence, "type": verdict["type"], "reason": verdict.get("reason", "")}}
        rewrite = redact(" ".join(verdict.get("rewrite", "").split()))
        if claims.accepts_rewrite(fact.content, rewrite):  # a whole sentence; what was said stays as evidence
            fact.evidence["original"], fact.content = fact.content, rewrite
        kept.append(fact)
    return kept, len(facts) - len(kept)
