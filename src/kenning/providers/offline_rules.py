"""Deterministic rules the offline provider answers with (and the lexicon contradiction uses).

- extract(): sentence-level fact splitting; a sentence is a fact only when it passes the one claim
  test (kenning.core.claims: asserted, complete, not a question / hedge / speculation / wish /
  bug report / plan / fragment / chatter), typed by it (constraint / decision / preference / gotcha) or by
  the type heuristics (procedural / semantic / fact), with its confidence and evidence (a
  transcript line, "Speaker: …", is judged like a session's turn: its plain statements are no
  facts, the raw turn holds them); regex
  entity triples ("X uses Y", "switched from X to Y for Z", "X is a Y", ...) from asserted sentences.
- decide(): ADD / UPDATE / NONE against the candidates by token overlap, negation/antonym
  conflict and change language ("switched from", "no longer", "instead of").
- contradiction(): the same conflict rules, as the semantic contradiction answer.
- hints(): questions a memory answers, about its entities and its subject (prospective index).

Everything is a pure function of its input: same input, same output.
"""

from __future__ import annotations

import re
from typing import TypedDict

from kenning.core import claims
from kenning.core.text import STOP_WORDS as BASE_STOP_WORDS
from kenning.graph.decisions import is_decision_content
from kenning.graph.entities import extract_mentions

STOP_WORDS = BASE_STOP_WORDS | frozenset("all also any been can could just must now should some us very".split())
NEGATIONS = frozenset(
    "not no never none nobody nothing neither nor cannot can't don't doesn't didn't isn't aren't"
    " wasn't weren't won't wouldn't shouldn't mustn't without disabled".split()
)
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("enabled", "disabled"), ("enable", "disable"), ("allow", "deny"), ("allowed", "denied"),
    ("true", "false"), ("on", "off"), ("yes", "no"), ("accept", "reject"), ("accepted", "rejected"),
    ("include", "exclude"), ("included", "excluded"), ("always", "never"), ("start", "stop"),
    ("open", "closed"), ("public", "private"), ("sync", "async"), ("synchronous", "asynchronous"),
    ("add", "remove"), ("added", "removed"), ("increase", "decrease"), ("before", "after"),
    ("required", "optional"), ("success", "failure"), ("valid", "invalid"), ("like", "dislike"),
    ("prefer", "avoid"), ("works", "broken"), ("supported", "unsupported"), ("online", "offline"),
)
CHANGE_LANGUAGE = re.compile(
    r"\b(?:switch(?:ed|ing)?|migrat(?:ed|ing|e)|mov(?:ed|ing)|replac(?:ed|ing|e)|chang(?:ed|ing))\b.{0,40}?"
    r"\bfrom\s+(?P<old>[\w.+#\-/]+(?:\s+[\w.+#\-/]+)?)"
    r"|\bno longer\b|\binstead of\s+(?P<old2>[\w.+#\-/]+)|\bnow (?:uses|use|using|runs|prefers)\b"
    r"|\bnot anymore\b|\banymore\b|\bdeprecated\b|\bstopped using\s+(?P<old3>[\w.+#\-/]+)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'_.+#\-]*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`]?[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_FENCE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_ABBREVIATION = re.compile(
    r"(?:^|[\s(\[])(?:e\.g|i\.e|etc|vs|cf|approx|incl|esp|viz|al|no|fig|mr|mrs|ms|dr|st|jr|sr)\.?$"
    r"|(?:^|\s)(?-i:[A-Z])\.$", re.IGNORECASE)  # and initials (J. R. Smith)
_FILLER = re.compile(r"^(?:ok(?:ay)?|thanks?(?: you)?|hi|hello|sure|great|cool|yes|no|got it)\b[.!]*$", re.I)
_SPEAKER_LINE = re.compile(r"^\s*([A-Z][\w'-]{0,30}(?: [A-Z][\w'-]{0,30})?):\s+(?=\S)")  # "Caroline: …", "User: …"
_NOT_SPEAKERS = frozenset(  # labels that tag a note, not a speaker
    "note notes gotcha decision rule constraint preference fact todo update fix warning important summary context"
    " task outcome reason why example tip heads-up caveat amended rule problem solution answer question q a"
    " bug error status result step".split()) | {"amended rule", "heads up", "root cause", "key fact"}
_EPHEMERAL = re.compile(r"^(?:let me|i'?ll (?:just|now)|i am going to|right now i|now i'?m)\b", re.I)
_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("preference", re.compile(
        r"\b(?:prefers?|preferred|likes?|dislikes?|favou?rite|rather than|wants? to use|hates?|loves?)\b", re.I)),
    ("procedural", re.compile(
        r"^(?:to\s+\w+|run|use|install|call|set|add|create|start|open|build|deploy|first|then|next)\b"
        r"|\b(?:npm|pip|git|make|docker|cargo|pytest|uv|yarn|pnpm|kubectl)\s+\w+|`[^`]+`|\bstep \d", re.I)),
    ("semantic", re.compile(
        r"\b(?:is an?|are an?|means|refers to|is defined as|stands for|consists of|is the)\b", re.I)),
)
_PRONOUNS = frozenset("i we you he she it they this that there one someone everyone".split())
_DETERMINERS = re.compile(r"^(?:the|a|an|our|my|your|their|its|this|that|these|those|his|her)\s+", re.I)
_PHRASE = r"[A-Za-z0-9_.+#@/\-]+(?:\s+[A-Za-z0-9_.+#@/\-]+){0,3}?"
_OBJECT_STOP = r"(?=\s+(?:for|in|at|with|because|since|when|while|to|and|but|as|on|instead|over|via)\b|[.,;:!?)]|$)"
_RELATION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rel, re.compile(rf"(?P<s>{_PHRASE})\s+{verb}\s+(?P<o>{_PHRASE}){_OBJECT_STOP}", re.I))
    for rel, verb in (
        ("uses", r"(?:uses|use|is using|are using|relies on)"),
        ("depends_on", r"(?:depends on|depend on|requires|require|needs)"),
        ("runs_on", r"(?:runs on|run on|is hosted on|is deployed (?:on|to))"),
        ("written_in", r"(?:is written in|are written in|is built with|is implemented in)"),
        ("calls", r"(?:calls|invokes|talks to|connects to|imports)"),
        ("stores_in", r"(?:stores (?:\w+\s+)?in|is stored in|writes to|persists to)"),
        ("prefers", r"(?:prefers|prefer)"),
        ("owns", r"(?:owns|maintains|is responsible for)"),
        ("replaced", r"(?:replaced|supersedes)"),
        ("is_a", r"(?:is an?|are an?)"),
    )
)
_MIGRATION = re.compile(
    rf"\b(?:switch(?:ed|ing)?|migrat(?:ed|ing|e)|mov(?:ed|ing))\s+(?:(?P<x>{_PHRASE})\s+)?from\s+"
    rf"(?P<old>{_PHRASE})\s+(?:to|onto)\s+(?P<new>{_PHRASE}){_OBJECT_STOP}(?:\s+for\s+(?P<for>{_PHRASE}){_OBJECT_STOP})?",
    re.I,
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens with trailing punctuation stripped."""
    return [t.lower().rstrip(".'-") for t in _WORD.findall(text)]


def _stem(token: str) -> str:
    """Very light stemming so 'uses'/'use' and 'services'/'service' overlap."""
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def content_tokens(text: str) -> set[str]:
    """Stemmed tokens minus stop words and negations: the overlap basis."""
    return {_stem(t) for t in tokens(text) if t and t not in STOP_WORDS and t not in NEGATIONS}


def has_negation(text: str) -> bool:
    return any(t in NEGATIONS or t.endswith("n't") for t in tokens(text))


def antonym_conflict(a: str, b: str) -> tuple[str, str] | None:
    ta, tb = set(tokens(a)), set(tokens(b))
    for left, right in ANTONYM_PAIRS:
        if (left in ta and right in tb and right not in ta) or (right in ta and left in tb and left not in ta):
            return left, right
    return None


def overlap(a: str, b: str) -> tuple[int, float]:
    """(shared content tokens, Jaccard) between two texts."""
    ta, tb = content_tokens(a), content_tokens(b)
    if not ta or not tb:
        return 0, 0.0
    shared = len(ta & tb)
    return shared, shared / len(ta | tb)


def _split_line(line: str) -> list[str]:
    """Sentence ends in one line, except inside `code spans` and after an abbreviation."""
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(line)]
    parts, start = [], 0
    for match in _SENTENCE_END.finditer(line):
        end = match.start()
        if any(a < end < b for a, b in spans) or _ABBREVIATION.search(line[start:end]):
            continue
        parts.append(line[start:end])
        start = match.end()
    parts.append(line[start:])
    return [p.strip() for p in parts if p.strip()]


def split_sentences(content: str) -> list[str]:
    """Sentences of prose: fenced code dropped, list items and lines split, sentence ends split
    (not inside a `code span`, not after e.g. / i.e. / vs. / cf. / etc. and the like)."""
    text = _FENCE_BLOCK.sub(" ", content)
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if line:
            out.extend(_split_line(line))
    return out


def fact_type(sentence: str) -> str:
    if is_decision_content(sentence):
        return "decision"
    for name, pattern in _TYPE_RULES:
        if pattern.search(sentence):
            return name
    return "fact"


def _clean_phrase(phrase: str | None) -> str | None:
    if not phrase:
        return None
    phrase = _DETERMINERS.sub("", phrase.strip().strip(".,;:'\"`()[]"))
    words = phrase.split()
    if not words or (len(words) == 1 and words[0].lower() in _PRONOUNS | STOP_WORDS):
        return None
    if words[0].lower() in _PRONOUNS:
        return None
    return phrase[:100]


# -- the tasks' inputs (what the pipeline's prompts put in their task block) and answers ----------
class ExtractionTask(TypedDict, total=False):
    content: str


class ClaimGateTask(TypedDict, total=False):
    candidates: list[claims.ClaimCandidate]


class DecisionFact(TypedDict, total=False):
    content: str
    type: str
    confidence: float


class DecisionCandidate(TypedDict, total=False):
    id: str
    type: str
    content: str


class DecisionTask(TypedDict, total=False):
    fact: DecisionFact
    candidates: list[DecisionCandidate]


class ContradictionTask(TypedDict, total=False):
    statement_a: str
    statement_b: str


class HintsTask(TypedDict, total=False):
    content: str
    max: int


class TripleAnswer(TypedDict):
    source: str
    relationship: str
    target: str
    confidence: float


class FactAnswer(TypedDict):
    content: str
    type: str
    confidence: float
    evidence: claims.EvidenceDict | dict[str, object]  # {} when the claim test gave none


class ExtractionAnswer(TypedDict):
    facts: list[FactAnswer]
    entities: list[TripleAnswer]


class ClaimGateAnswer(TypedDict):
    claims: list[claims.ClaimVerdict]


class DecisionAnswer(TypedDict):
    action: str  # ADD | UPDATE | NONE
    targetId: str | None
    confidence: float
    reason: str


class ContradictionAnswer(TypedDict):
    contradicts: bool
    confidence: float
    reasoning: str


def entity_triples(sentence: str) -> list[TripleAnswer]:
    """Regex (source, relationship, target) triples from one sentence."""
    found: list[TripleAnswer] = []

    def add(src: str | None, rel: str, dst: str | None, conf: float) -> None:
        src, dst = _clean_phrase(src), _clean_phrase(dst)
        if src and dst and src.lower() != dst.lower():
            found.append({"source": src, "relationship": rel, "target": dst, "confidence": conf})

    for m in _MIGRATION.finditer(sentence):
        subject = m.group("for") or m.group("x") or sentence[: m.start()].strip().split(" ")[-1:][0]
        add(m.group("new"), "replaced", m.group("old"), 0.8)
        add(subject, "uses", m.group("new"), 0.75)
        add(subject, "previously_used", m.group("old"), 0.7)
    if not found:
        for rel, pattern in _RELATION_RULES:
            related = pattern.search(sentence)
            if related:
                add(related.group("s"), rel, related.group("o"), 0.7)
    return found


def extract(payload: ExtractionTask) -> ExtractionAnswer:
    """Answer for the extraction task: {"facts": [...], "entities": [...]}; each fact carries the
    claim test's confidence and `evidence`."""
    content = str(payload.get("content") or "")
    facts: list[FactAnswer] = []
    entities: list[TripleAnswer] = []
    seen: set[str] = set()
    previous: str | None = None
    label = _SPEAKER_LINE.match(content)
    conversation = label is not None and label.group(1).lower() not in _NOT_SPEAKERS
    if label is not None and conversation:  # a transcript line: judged as what the speaker said, like a session's turn
        content = content[label.end():]
    for sentence in split_sentences(content):
        # a conversation's plain statements stay in the raw turn (as at session end): only claims leave it
        context = claims.Context(speaker="unknown", previous=previous, allow_fact=not conversation)
        previous = " ".join(sentence.split())
        if sentence.endswith("?") or _FILLER.match(sentence) or _EPHEMERAL.match(sentence):
            continue
        if claims.rejection(sentence) is None:
            entities.extend(entity_triples(sentence))
        verdict = claims.judge(sentence, context)
        key = verdict.text.lower().rstrip(".!;:")
        if not verdict.kept or len(verdict.text) < 10 or key in seen:
            continue
        seen.add(key)
        kind = verdict.type if verdict.type in claims.RULE_TYPES else fact_type(verdict.text)
        facts.append({"content": verdict.text, "type": kind, "confidence": verdict.confidence,
                      "evidence": verdict.evidence.to_dict() if verdict.evidence else {}})
    return {"facts": facts, "entities": entities}


def claim_gate(payload: ClaimGateTask) -> ClaimGateAnswer:
    """Answer for the claim-gate task: the offline claim test's verdict on each candidate."""
    out: list[claims.ClaimVerdict] = []
    for item in payload.get("candidates") or []:
        said = item.get("speaker")
        speaker = said if said is not None and said in ("user", "assistant") else "unknown"
        verdict = claims.judge(str(item.get("text") or ""), claims.Context(speaker=speaker, accepted=True,
                                                                             antecedent=item.get("antecedent")))
        out.append({"id": str(item.get("id")), "durable": verdict.kept, "type": verdict.type or "fact",
                    "confidence": verdict.confidence if verdict.kept else 0.0, "reason": verdict.reason})
    return {"claims": out}


def conflict(fact: str, other: str) -> str | None:
    """Why `fact` replaces/contradicts `other`, or None. Conservative: the offline provider's
    UPDATEs supersede memories, so a flipped polarity or an antonym needs the two statements to
    be mostly the same (Jaccard >= 0.5), and change language ("switched from X") needs X in
    `other` plus at least one more shared token."""
    shared, jaccard = overlap(fact, other)
    if shared < 2:
        return None
    if jaccard >= 0.5 and has_negation(fact) != has_negation(other):
        return "negation polarity differs"
    pair = antonym_conflict(fact, other) if jaccard >= 0.5 else None
    if pair:
        return f"antonyms {pair[0]}/{pair[1]}"
    change = CHANGE_LANGUAGE.search(fact)
    if change:
        old = change.group("old") or change.group("old2") or change.group("old3")
        if old is not None and _stem(old.split()[0].lower()) in content_tokens(other):
            return f"change language: the fact replaces {old.split()[0]!r}"
    return None


def decide(payload: DecisionTask) -> DecisionAnswer:
    """Answer for the decision task: {"action", "targetId", "confidence", "reason"}."""
    fact = payload.get("fact") or {}
    text = str(fact.get("content") or "")
    fact_conf = float(fact.get("confidence") or 0.0)
    best: tuple[float, DecisionAnswer] | None = None
    for cand in payload.get("candidates") or []:
        other = str(cand.get("content") or "")
        shared, jaccard = overlap(text, other)
        why = conflict(text, other)
        if not why and (text.strip().lower().rstrip(".") == other.strip().lower().rstrip(".") or jaccard >= 0.8):
            return {"action": "NONE", "targetId": cand.get("id"), "confidence": 0.9,
                    "reason": f"already known (token overlap {jaccard:.2f})"}
        if why and (best is None or jaccard > best[0]):
            best = (jaccard, {"action": "UPDATE", "targetId": cand.get("id"), "confidence": 0.8,
                              "reason": f"supersedes the candidate: {why}"})
    if best is not None:
        return best[1]
    return {"action": "ADD", "targetId": None, "confidence": round(fact_conf, 3),
            "reason": "new information not covered by the candidates"}


def contradiction(payload: ContradictionTask) -> ContradictionAnswer:
    """Answer for the contradiction task: {"contradicts", "confidence", "reasoning"}."""
    a, b = str(payload.get("statement_a") or ""), str(payload.get("statement_b") or "")
    why = conflict(a, b) or conflict(b, a)
    return {"contradicts": bool(why), "confidence": 0.7 if why else 0.6,
            "reasoning": why or "no negation, antonym or change-language conflict found"}


def hints(payload: HintsTask) -> list[str]:
    """Deterministic hints: questions about the entities and the memory's subject."""
    content = str(payload.get("content") or "")
    limit = int(payload.get("max") or 5)
    found: list[str] = []
    for mention in extract_mentions(content):
        found.append(f"what do we know about {mention.name}?")
        if mention.entity_type == "tool":
            found.append(f"how do we use {mention.name}?")
    words = content.split()
    if words:
        found.append(f"what about {' '.join(words[:8]).rstrip('.,;:!?')}?")
    return list(dict.fromkeys(found))[:limit]
