"""Inline entity linker: the write-time "fast path" of the knowledge graph.

`link_memory(conn, memory_id, content, project)` runs inside the caller's write
transaction, right after the memory row is inserted. It uses no LLM, no network and no
clock-dependent logic: regex entity spotting (`graph.entities`), relation patterns
("from X to Y", "X over Y", "X uses Y", co-mention), aspect inference (`graph.aspects`)
and decision auto-protection (`graph.decisions`): when the memory uses decision language,
every attribute it yields is a `constraint` with importance 0.85.

Entities are queryable by graph traversal the moment the memory commits; the async
extraction pipeline may refine them later (memory-pipeline-v2 "Inline Entity Linker").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kenning.core import secrets
from kenning.core.clock import now_iso
from kenning.graph.aspects import infer_aspect
from kenning.graph.decisions import (
    ATTRIBUTE_IMPORTANCE,
    DECISION_IMPORTANCE,
    is_constraint_language,
    is_decision_content,
)
from kenning.graph.entities import MAX_ENTITIES_PER_MEMORY, Mention, extract_mentions, split_sentences
from kenning.store import graph as graph_store
from kenning.store.backend import Connection

MAX_ATTRIBUTE_CHARS = 500
MAX_COMENTION_ENTITIES = 6
LINKER_CONFIDENCE_SCALE = 1.0

_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>.+?)\s+(?:to|with|for)\s+(?P<b>.+?)(?=\s+(?:for|in|on|at|because|since|as|so|when|"
    r"after|before|and)\b|[,.;!?]|$)",
    re.IGNORECASE,
)
_PAIR_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = (
    (re.compile(r"\b(?:over|instead\s+of|rather\s+than)\b", re.IGNORECASE), "preferred_over", 0.7),
    (re.compile(r"\b(?:uses|use|using|depends\s+on|requires|runs\s+on|built\s+(?:with|on)|backed\s+by)\b",
                re.IGNORECASE), "uses", 0.6),
    (re.compile(r"\b(?:replaced|replaces)\b", re.IGNORECASE), "replaced", 0.7),
)


@dataclass
class LinkResult:
    """What the linker wrote for one memory."""

    memory_id: str
    entities: list[str] = field(default_factory=list)
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    attributes: int = 0
    constraints: int = 0
    decision: bool = False


def _within(mentions: list[Mention], start: int, end: int) -> Mention | None:
    for mention in mentions:
        if start <= mention.start < end:
            return mention
    return None


def _sentence_relations(sentence: str, mentions: list[Mention]) -> list[tuple[Mention, str, Mention, float]]:
    """Typed relations found in one sentence, plus weak co-mention edges."""
    found: list[tuple[Mention, str, Mention, float]] = []
    typed_pairs: set[tuple[str, str]] = set()
    for match in _FROM_TO.finditer(sentence):
        a = _within(mentions, match.start("a"), match.end("a"))
        b = _within(mentions, match.start("b"), match.end("b"))
        if a and b and a.key != b.key:
            found.append((a, "replaced_by", b, 0.8))
            typed_pairs.add((a.key, b.key))
    for pattern, rtype, conf in _PAIR_PATTERNS:
        for match in pattern.finditer(sentence):
            before = [m for m in mentions if m.start + len(m.text) <= match.start()]
            after = [m for m in mentions if m.start >= match.end()]
            if before and after and before[-1].key != after[0].key:
                pair = (before[-1].key, after[0].key)
                if pair not in typed_pairs:
                    found.append((before[-1], rtype, after[0], conf))
                    typed_pairs.add(pair)
    head = mentions[:MAX_COMENTION_ENTITIES]
    for i, a in enumerate(head):
        for b in head[i + 1:]:
            if (a.key, b.key) not in typed_pairs and (b.key, a.key) not in typed_pairs:
                found.append((a, "related_to", b, 0.3))
    return found


def plan_links(content: str) -> list[tuple[str, list[Mention]]]:
    """(sentence, mentions in it) pairs, with at most MAX_ENTITIES_PER_MEMORY distinct entities."""
    planned: list[tuple[str, list[Mention]]] = []
    keys: set[str] = set()
    for _offset, sentence in split_sentences(content):
        mentions = []
        hidden = [(m.start(), m.end()) for m in secrets.MARKER.finditer(sentence)]
        for mention in extract_mentions(sentence):
            if not mention.name.strip() or (mention.key not in keys and len(keys) >= MAX_ENTITIES_PER_MEMORY):
                continue  # a blank mention (e.g. a code span of spaces) names nothing
            if any(a <= mention.start < b for a, b in hidden) or secrets.scan(mention.name):
                continue  # never an entity named after a secret or a [REDACTED:kind] marker
            keys.add(mention.key)
            mentions.append(mention)
        if mentions:
            planned.append((sentence.strip(), mentions))
    return planned


def link_memory(conn: Connection, memory_id: str, content: str, project: str | None = None) -> LinkResult:
    """Spot entities in `content` and write entities, mentions, relations, aspects and
    attributes for `memory_id`, inside the caller's write transaction.

    Deterministic: the same content always yields the same entities, relations and
    attributes. Idempotent: linking the same memory twice adds nothing. `project` is
    accepted for scoping by callers; entities themselves are shared across projects
    (recall filters the linked memories by project).
    """
    result = LinkResult(memory_id=memory_id, decision=is_decision_content(content))
    if graph_store.has_mentions(conn, memory_id, source="linker"):
        return result
    ids: dict[str, str] = {}
    at = now_iso()
    for sentence, mentions in plan_links(content):
        for mention in mentions:
            if mention.key not in ids:
                ids[mention.key] = graph_store.upsert_entity(conn, mention.name, mention.entity_type, at=at)
                graph_store.link_mention(conn, memory_id, ids[mention.key], mention.text,
                                         confidence=mention.confidence * LINKER_CONFIDENCE_SCALE, at=at)
                result.entities.append(mention.name)
        _write_attributes(conn, result, sentence, mentions, ids, at)
        for a, rtype, b, conf in _sentence_relations(sentence, mentions):
            graph_store.upsert_relation(conn, ids[a.key], ids[b.key], rtype, confidence=conf, at=at)
            result.relations.append((a.name, rtype, b.name))
    return result


def _write_attributes(conn: Connection, result: LinkResult, sentence: str, mentions: list[Mention],
                      ids: dict[str, str], at: str) -> None:
    constraint = result.decision or is_constraint_language(sentence)
    kind = "constraint" if constraint else "attribute"
    importance = DECISION_IMPORTANCE if constraint else ATTRIBUTE_IMPORTANCE
    aspect_name = infer_aspect(sentence)
    text = sentence[:MAX_ATTRIBUTE_CHARS]
    for mention in mentions:
        entity_id = ids[mention.key]
        aspect_id = graph_store.upsert_aspect(conn, entity_id, aspect_name, at=at)
        graph_store.add_attribute(
            conn, entity_id, text, memory_id=result.memory_id, aspect_id=aspect_id, kind=kind,
            confidence=mention.confidence, importance=importance, at=at,
        )
        result.attributes += 1
        result.constraints += int(constraint)
