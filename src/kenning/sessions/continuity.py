"""Continuity scoring: how much did this session's memories help, per memory and overall.

Two judges share one output shape (`ContinuityResult`):
- the **LLM judge** (scorer seed "Improved Continuity Scoring"): the transcript plus the
  injected memories go to the configured LLM, which returns per-memory relevance, overall
  score, confidence, missing topics, novel_context_count and reasoning (ids it invents are
  dropped);
- the **heuristic judge**, used when no LLM is configured or it fails: per memory, agent
  feedback (mapped from −1..1 to 0..1), FTS hits during the session and keyword overlap with
  the transcript, weighted by which signals exist. Its confidence grows with the evidence
  it had (feedback coverage, conversation length, injected count) and its reasoning says
  exactly which numbers produced the score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from kenning.core.text import STOP_WORDS
from kenning.sessions.transcript import Turn
from kenning.store.sessions import ContinuityVerdict, SessionMemoryRow, SessionPrompt

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{3,}")
_STOP = STOP_WORDS | frozenset(
    "this that with from have were will would there their them they then than what when where which"
    " while about into over also just only some such very more most much many been being does done"
    " using used make made like should could your yours ours here each other because after before"
    " those these need needs want wants file files code".split()
)
USED_THRESHOLD = 0.5


def keywords(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text or "")} - _STOP


@dataclass
class ContinuityResult:
    score: float
    confidence: float
    per_memory: dict[str, float]
    memories_recalled: int
    memories_used: int
    novel_context_count: int
    missing_topics: list[str] = field(default_factory=list)
    reasoning: str = ""
    judge: str = "heuristic"

    def as_row(self, project: str | None) -> ContinuityVerdict:
        return {
            "project": project, "score": self.score, "confidence": self.confidence,
            "memories_recalled": self.memories_recalled, "memories_used": self.memories_used,
            "novel_context_count": self.novel_context_count, "missing_topics": self.missing_topics,
            "reasoning": self.reasoning, "judge": self.judge,
        }


def _clip(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def _overlap(memory_id: str, content: str, convo_words: set[str], convo_text: str) -> float:
    if len(memory_id) >= 6 and re.search(rf"\b{re.escape(memory_id)}\b", convo_text):
        return 1.0  # the agent cited the memory by id
    words = keywords(content)
    if not words:
        return 0.0
    coverage = len(words & convo_words) / len(words)
    return _clip((coverage - 0.2) / 0.6)


def heuristic_judge(
    rows: Sequence[SessionMemoryRow], turns: list[Turn], prompts: Sequence[SessionPrompt]
) -> ContinuityResult:
    """Score every session_memories row from feedback, FTS hits and transcript overlap."""
    convo = "\n".join(t.text for t in turns if t.role in ("user", "assistant"))
    convo += "\n" + "\n".join(p["prompt"] for p in prompts)
    convo_words = keywords(convo)
    per_memory: dict[str, float] = {}
    for row in rows:
        overlap = _overlap(row["memory_id"], row.get("content") or "", convo_words, convo)
        fts = _clip(row.get("fts_hit_count", 0) / 2.0)
        rated = row.get("agent_relevance_score")  # set with agent_feedback_count (store.apply_feedback)
        if row.get("agent_feedback_count") and rated is not None:
            feedback = (float(rated) + 1.0) / 2.0
            value = 0.6 * feedback + 0.2 * fts + 0.2 * overlap
        else:
            value = 0.5 * fts + 0.5 * overlap
        per_memory[row["memory_id"]] = round(_clip(value), 4)

    injected = [r for r in rows if r.get("was_injected")]
    with_feedback = [r for r in injected if r.get("agent_feedback_count")]
    relevances = [per_memory[r["memory_id"]] for r in injected]
    used = sum(1 for v in relevances if v >= USED_THRESHOLD)
    score = sum(relevances) / len(relevances) if relevances else 0.0
    unanswered = [p for p in prompts if not p.get("fts_hits")]
    user_turns = sum(1 for t in turns if t.role == "user") or len(prompts)

    feedback_cov = len(with_feedback) / len(injected) if injected else 0.0
    confidence = 0.1 + 0.45 * feedback_cov + 0.25 * _clip(user_turns / 5) + 0.1 * _clip(len(injected) / 5)
    if not convo.strip():
        confidence = min(confidence, 0.3)
    spread = _variance(relevances)
    if len(relevances) >= 3 and spread < 0.005:
        confidence *= 0.7  # the judge could not tell the memories apart
    reasoning = (
        f"heuristic: {len(injected)} injected, {len(with_feedback)} with agent feedback "
        f"(coverage {feedback_cov:.2f}); {sum(1 for r in rows if r.get('fts_hit_count'))} candidates hit by FTS; "
        f"{user_turns} user turns, {len(convo_words)} distinct conversation keywords; "
        f"{used} injected memories scored >= {USED_THRESHOLD}; {len(unanswered)} prompts matched no memory; "
        f"relevance variance {spread:.3f}. Weights: feedback 0.6 / fts 0.2 / overlap 0.2 when feedback "
        f"exists, else fts 0.5 / overlap 0.5."
    )
    return ContinuityResult(
        score=round(score, 4), confidence=round(_clip(confidence), 4), per_memory=per_memory,
        memories_recalled=len(injected), memories_used=used, novel_context_count=len(unanswered),
        missing_topics=[p["prompt"][:80] for p in unanswered[:5]], reasoning=reasoning,
    )


def _variance(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


# -- LLM judge ------------------------------------------------------------------------------------
class JudgeOutput(BaseModel):
    """The JSON the continuity judge must return."""

    overall_score: float = Field(..., ge=0.0, le=1.0, description="How well memory served the session.")
    confidence: float = Field(..., ge=0.0, le=1.0, description="How sure the judge is.")
    per_memory_scores: dict[str, float] = Field(
        default_factory=dict, description="memory id → relevance 0.0-1.0 to what was discussed."
    )
    missing_topics: list[str] = Field(default_factory=list, description="Topics memory should have covered.")
    novel_context_count: int = Field(0, ge=0, description="Times the user had to re-explain context.")
    reasoning: str = Field("", description="Short explanation of the scores.")


JUDGE_PROMPT = """You judge whether a coding agent's pre-loaded memories helped its session.

These memories were pre-loaded for this session:
{memories}

Transcript (may be truncated):
<transcript>
{transcript}
</transcript>

For each memory, rate its relevance to what was actually discussed (0.0-1.0).
Also identify any topics where the user had to re-explain things that memory SHOULD have covered but didn't.

Return ONLY JSON:
{{"overall_score": 0.0-1.0, "confidence": 0.0-1.0, "per_memory_scores": {{"memory_id": 0.85}},
"missing_topics": ["..."], "novel_context_count": 0, "reasoning": "explanation"}}
"""


def _extract_json(text: str) -> object:
    """The JSON object in the judge's answer (untrusted: JudgeOutput validates it)."""
    text = re.sub(r"<think>.*?</think>", "", text or "", flags=re.DOTALL)
    text = re.sub(r"```(?:json)?", "", text)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the judge's answer")
    return json.loads(text[start:end + 1])


def llm_judge(
    generate: Callable[[str], str], rows: Sequence[SessionMemoryRow], turns: list[Turn],
    prompts: Sequence[SessionPrompt], *, max_transcript_chars: int = 24_000,
) -> ContinuityResult:
    """Ask the LLM; raises ValueError / ValidationError when the answer is unusable."""
    injected = [r for r in rows if r.get("was_injected")]
    memories = "\n".join(
        f"{i}. [{r['memory_id']}]: \"{(r.get('content') or '')[:300]}\"" for i, r in enumerate(injected, 1)
    ) or "(none)"
    convo = "\n".join(f"{t.role}: {t.text}" for t in turns if t.role in ("user", "assistant"))
    if not convo:
        convo = "\n".join(f"user: {p['prompt']}" for p in prompts)
    if len(convo) > max_transcript_chars:
        half = max_transcript_chars // 2
        convo = convo[:half] + "\n[…]\n" + convo[-half:]
    raw = generate(JUDGE_PROMPT.format(memories=memories, transcript=convo))
    try:
        parsed = JudgeOutput.model_validate(_extract_json(raw))
    except ValidationError as exc:
        raise ValueError(f"judge answer does not match the schema: {exc.errors()[:2]}") from exc
    known = {r["memory_id"] for r in injected}
    per_memory = {k: round(_clip(float(v)), 4) for k, v in parsed.per_memory_scores.items() if k in known}
    used = sum(1 for v in per_memory.values() if v >= USED_THRESHOLD)
    confidence = parsed.confidence
    if len(per_memory) >= 3 and _variance(list(per_memory.values())) < 0.005:
        confidence *= 0.7
    return ContinuityResult(
        score=round(parsed.overall_score, 4), confidence=round(confidence, 4), per_memory=per_memory,
        memories_recalled=len(injected), memories_used=used,
        novel_context_count=parsed.novel_context_count, missing_topics=parsed.missing_topics[:10],
        reasoning=parsed.reasoning[:4000], judge="llm",
    )
