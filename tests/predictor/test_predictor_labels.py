"""The label hierarchy, one rule at a time, and the session gates."""

from __future__ import annotations

import pytest

from kenning.predictor.fusion import compare
from kenning.predictor.labels import build_session_labels, comparison_relevance, label_candidate

SESSION = {"session_key": "s", "score": 0.8, "confidence": 0.9, "novel_context_count": 0,
           "started_at": "2026-03-02T10:00:00.000Z"}
START = SESSION["started_at"]


def cand(**kw):
    base = {"memory_id": "m", "was_injected": 0, "relevance_score": None, "fts_hit_count": 0,
            "agent_relevance_score": None, "access_count": 0, "superseded_by": None, "is_deleted": 0,
            "deleted_at": None, "memory_created_at": "2026-01-01T00:00:00.000Z",
            "memory_updated_at": "2026-01-01T00:00:00.000Z"}
    base.update(kw)
    return base


def label(c, session=SESSION, cosine=None):
    return label_candidate(c, session, cosine, START).label


def test_agent_feedback_is_primary_with_the_0_7_0_2_0_1_blend():
    # agent 0.8, never FTS-matched, continuity 0.5: 0.56 + 0.2*0.8 + 0.1*0.8 = 0.8 ("keep 0.8")
    assert label(cand(was_injected=1, agent_relevance_score=0.8), {**SESSION, "score": 0.5}) == pytest.approx(0.8)
    # continuity scales trust: a better session gives a higher label for the same agent score
    assert label(cand(was_injected=1, agent_relevance_score=0.8), {**SESSION, "score": 1.0}) > 0.8
    # agent scored 0 but FTS matched it twice: bumped to 0.3
    assert label(cand(was_injected=1, agent_relevance_score=0.0, fts_hit_count=2)) == pytest.approx(0.3)
    # a negative agent score stays negative
    assert label(cand(was_injected=1, agent_relevance_score=-0.6)) < 0


def test_continuity_path_for_injected_memories():
    assert label(cand(was_injected=1, relevance_score=0.7)) == pytest.approx(0.7)
    assert label(cand(was_injected=1, relevance_score=0.7, fts_hit_count=1)) == pytest.approx(0.8)
    assert label(cand(was_injected=1)) == pytest.approx(0.8)  # high-scoring session: continuity
    low = {**SESSION, "score": 0.4}
    assert label(cand(was_injected=1), low) == pytest.approx(0.2)  # low-scoring: continuity * 0.5
    worse = {**SESSION, "score": 0.2}
    assert label(cand(was_injected=1), worse) == pytest.approx(0.0)  # x0.5, never matched and < 0.3: -0.1


def test_non_injected_soft_negatives_and_fts_misses():
    assert label(cand(), cosine=0.3) == 0.0
    assert label(cand(), cosine=0.65) == pytest.approx(0.25)
    assert label(cand(fts_hit_count=1), cosine=0.1) == pytest.approx(0.3)
    assert label(cand(fts_hit_count=2), cosine=0.1) == pytest.approx(0.6)
    novel = {**SESSION, "novel_context_count": 2}
    assert label(cand(fts_hit_count=2), novel) == pytest.approx(0.7)  # +0.1 on missing memories
    assert label(cand(relevance_score=0.6), novel) == pytest.approx(0.8)  # >= 0.7, +0.1
    assert label(cand(access_count=25), cosine=0.1) == pytest.approx(0.05)


def test_negative_labels_override_everything():
    assert label(cand(was_injected=1, agent_relevance_score=0.9, superseded_by="x")) == pytest.approx(-0.3)
    deleted_soon = cand(was_injected=1, is_deleted=1, deleted_at="2026-03-02T20:00:00.000Z")
    assert label(deleted_soon) == pytest.approx(-0.5)
    deleted_later = cand(was_injected=1, is_deleted=1, deleted_at="2026-03-05T20:00:00.000Z")
    assert label(deleted_later) == pytest.approx(-0.3)


def test_recent_edit_adds_a_little():
    edited = cand(was_injected=1, relevance_score=0.5, memory_updated_at="2026-02-28T10:00:00.000Z")
    assert label(edited) == pytest.approx(0.55)


def test_session_gates_confidence_and_low_variance():
    rows = [cand(memory_id="a", was_injected=1, relevance_score=0.9), cand(memory_id="b")]
    ok = build_session_labels(SESSION, rows, [None, 0.1])
    assert ok.usable and ok.temperature == 0.5
    assert not build_session_labels({**SESSION, "confidence": 0.59}, rows, [None, 0.1]).usable
    flat = [cand(memory_id="a", was_injected=1, relevance_score=0.5),
            cand(memory_id="b", was_injected=1, relevance_score=0.5)]
    skipped = build_session_labels(SESSION, flat, [None, None])
    assert not skipped.usable and skipped.skip_reason == "low_variance"
    close = [cand(memory_id="a", was_injected=1, relevance_score=0.5),
             cand(memory_id="b", was_injected=1, relevance_score=0.55)]
    sharp = build_session_labels(SESSION, close, [None, None])
    assert sharp.usable and sharp.temperature == 0.3
    assert all(c.reasons for c in ok.labels)  # every label explains itself


def test_a_memory_rated_useful_before_but_not_shown_now_is_unknown_not_zero():
    """Nobody saw it this session, so the session cannot say it was unwanted: it is left out of
    the loss instead of being taught as 0.0 (else what the fused order stopped showing stays buried)."""
    before = {"m"}
    hidden = label_candidate(cand(), SESSION, 0.7, START, before)
    assert hidden.path == "unknown" and not hidden.judged and hidden.reasons
    # any sign this session, or having been shown, or no earlier rating: judged as before
    assert label_candidate(cand(fts_hit_count=1), SESSION, None, START, before).judged
    assert label_candidate(cand(relevance_score=0.6), SESSION, None, START, before).judged
    shown = label_candidate(cand(was_injected=1, agent_relevance_score=0.0), SESSION, None, START, before)
    assert shown.judged and shown.path == "agent"
    assert label_candidate(cand(relevance_score=0.2), SESSION, None, START, before).path == "unknown"
    assert label_candidate(cand(), SESSION, 0.7, START).label == 0.25  # never rated: a soft negative still
    # the spread gate reads judged labels only
    rows = [cand(memory_id="a", was_injected=1, relevance_score=0.5),
            cand(memory_id="b", was_injected=1, relevance_score=0.5), cand()]
    out = build_session_labels(SESSION, rows, [None, None, None], rated_useful=before)
    assert [c.judged for c in out.labels] == [True, True, False] and out.skip_reason == "low_variance"


def test_the_comparison_reads_what_the_session_showed_it_wanted_not_the_training_labels():
    """α is earned on agent ratings, what the transcript touched and an independent judge; the
    training labels credit whatever was injected and whatever the prompts' FTS matched, so a
    ranking that put those first would win its comparison by having been shown."""
    rows = [
        cand(memory_id="shown", was_injected=1, relevance_score=0.9, fts_hit_count=2),  # heuristic judge, FTS
        cand(memory_id="used", was_injected=1, relevance_score=0.3),  # touched
        cand(memory_id="missed", relevance_score=0.2),  # not shown, touched (the user needed it)
        cand(memory_id="rated0", was_injected=1, agent_relevance_score=0.0, agent_feedback_count=2),  # touched
        cand(memory_id="old", was_injected=1, superseded_by="new"),  # touched
    ]
    touched = {"used", "missed", "rated0", "old"}
    rel = comparison_relevance(rows, touched, "heuristic")
    assert rel == {"shown": 0.0, "used": 1.0, "missed": 1.0, "rated0": 0.0, "old": 0.0}
    # an independent judge's relevance counts where nothing else speaks; the agent outranks it
    llm = comparison_relevance(rows, set(), "llm")
    assert llm["shown"] == pytest.approx(0.9) and llm["missed"] == pytest.approx(0.2) and llm["rated0"] == 0.0

    labelled = build_session_labels(SESSION, rows, [None] * len(rows), START, touched=dict.fromkeys(touched, "named"))
    training = {c.memory_id: c.label for c in labelled.labels}
    predictor, baseline = ["shown", "rated0", "used", "missed"], ["used", "missed", "shown", "rated0"]
    injected = ["shown", "used", "rated0"]
    assert compare(baseline, predictor, injected, training).predictor_won  # the exposure's verdict
    verdict = compare(baseline, predictor, injected, rel)
    assert not verdict.predictor_won and verdict.baseline_ndcg == pytest.approx(1.0)
