"""Key facts from a transcript: the claims the session settled, as an overlay on its episodes.

Every sentence (split by `offline_rules.split_sentences`, which keeps "e.g." / code spans /
list items whole) of what the user and the assistant said is judged in its context by the one
claim test, `kenning.core.claims.judge_turns`: it is kept as a constraint / decision /
preference / gotcha only when it is a durable claim about the project — asserted (no question,
hedge, guess, wish or report of speculation), complete (a fragment only with the question it
answers), said by the user or in an assistant statement the user accepted — and never from the
request that opens the session (the session's task, `opening_task`), though a rule the user states
in it, or an opening that only states rules, is judged like any other sentence. Each fact carries its
confidence and evidence (which rule fired, speaker, acceptance, repetition, cues); a fact below
the confidence gate is written `needs_review`. Secrets are redacted; duplicates and very short
or very long sentences are skipped; at most `limit` facts per session, the most confident first
when there are more (kept in transcript order). Plain statements are not extracted: the
episodes hold them raw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kenning.core import claims
from kenning.core.secrets import MARKER, redact
from kenning.providers.offline_rules import split_sentences
from kenning.sessions.transcript import Turn

AMENDMENT = re.compile(  # says outright that an earlier rule changes
    r"\b(?:amend(?:s|ed|ing|ment)?|supersed(?:e|es|ed|ing)|changed (?:our|my) minds?|updates? to the)\b", re.I)
CHANGE = re.compile(  # may replace an earlier rule, or just compare two options
    r"\b(?:instead|no longer|from now on|not anymore|replac(?:es|ed|ing)|going forward)\b", re.I)
IMPORTANCE = {"decision": 0.8, "constraint": 0.8, "preference": 0.65, "gotcha": 0.7}
MIN_CHARS, MAX_CHARS = 4, 600  # "Down." is a claim with the question it answers; the check is on the stored text
MIN_STORED_CHARS = 25


@dataclass
class Fact:
    content: str
    type: str
    importance: float
    turn: int | None = None  # index of the turn it was said in
    amends: int = 0  # 2: says an earlier rule is amended; 1: change language; 0: neither
    confidence: float = 0.7
    needs_review: bool = False
    evidence: dict[str, Any] = field(default_factory=dict)


def amendment_level(sentence: str) -> int:
    own = claims.own_words(sentence)
    return 2 if AMENDMENT.search(own) else 1 if CHANGE.search(own) else 0


def chat_code_names(turns: list[Turn], prompts: list[str]) -> set[str]:
    """The code-shaped names a chat uses (`claims.code_names`: code spans, calls, snake_case, CamelCase, paths;
    a dotted name also by its last part): what to ask the code graph about at session end."""
    found: set[str] = set()
    for text in [t.text or "" for t in turns if t.role in ("user", "assistant")] or prompts:
        for name in claims.code_names(text):
            found.add(name)
            found.add(name.rsplit(".", 1)[-1])
    return found


def opening_task(turns: list[Turn], prompts: list[str]) -> str | None:
    """The request that opens the session: its first user turn (or first prompt), when it reads as a
    request, bug report or question (`claims.reads_as_task`); None when it only states rules."""
    first = next((t.text for t in turns if t.role == "user" and (t.text or "").strip()), None)
    text = first if first is not None else (prompts[0] if prompts else None)
    if not text or not claims.reads_as_task(text, split_sentences):
        return None
    return redact(" ".join(text.split()))[:500]


def key_facts(turns: list[Turn], prompts: list[str], limit: int,
              names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> list[Fact]:
    """Facts in transcript order (the prompts stand in for a missing transcript). `names`: the code graph's
    names the chat uses (`chat_code_names`): a claim missing its subject is completed with them first."""
    spoken = [(t.role, t.text or "") for t in turns]
    if not any(role in ("user", "assistant") for role, _ in spoken):
        spoken = [("user", p) for p in prompts]
    facts: list[Fact] = []
    seen: set[str] = set()
    for index, sentence, verdict in claims.judge_turns(spoken, split_sentences, names):
        sentence = " ".join(sentence.split()).strip(" -*>#")
        if (not verdict.kept or verdict.type is None  # (a kept verdict has its type)
                or not MIN_CHARS <= len(sentence) <= MAX_CHARS or sentence.startswith(("<", "{", "```"))):
            continue
        text = " ".join(verdict.text.split())
        key = text.lower().rstrip(".!")
        if key in seen or len(text) < MIN_STORED_CHARS:
            continue
        clean = redact(text)
        if sum(len(m.group(0)) for m in MARKER.finditer(clean)) > len(clean) / 2:
            continue  # mostly secrets: nothing worth keeping
        seen.add(key)
        evidence = dict(verdict.evidence.to_dict()) if verdict.evidence else {}  # a plain dict: the gate adds keys
        facts.append(Fact(clean, verdict.type, IMPORTANCE.get(verdict.type, 0.7), index if turns else None,
                          amendment_level(sentence), verdict.confidence, verdict.needs_review, evidence))
    if len(facts) > limit:  # the most confident, in transcript order
        keep = {id(f) for f in sorted(facts, key=lambda f: -f.confidence)[:limit]}
        facts = [f for f in facts if id(f) in keep]
    return facts
