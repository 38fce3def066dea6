"""Inject only what this session needs (issue 32): the prompt bar and the task in progress.

- the prompt bar: every prompt candidate gets a calibrated probability (sessions.prompt_bar, a logistic
  model fitted by bench/fit_prompt_bar.py); nothing below `prompt_min_probability` is shown, and the
  committed model is calibrated on the development data it was checked against;
- the task in progress: what the agent rated useful in the project's latest session opens the next one
  (a 'continuing' group, area rules included); rated down there, it goes.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from kenning.core.config_sessions import RankingSettings
from kenning.core.types import MemoryDraft
from kenning.sessions import prompt_bar
from kenning.store.prompt_candidates import of_session

HOLDOUT = Path(__file__).resolve().parents[2] / "bench" / "data" / "prompt_bar_holdout.jsonl.gz"


def _remember(k, content: str, **kw) -> str:
    kw.setdefault("created_at", "2026-01-01T00:00:00Z")
    return k.remember(MemoryDraft(content=content, **kw)).id


def _world(k) -> tuple[str, list[str]]:
    project = "bar"
    on_topic = _remember(k, "ledger-sync retries use exponential backoff capped at 30 seconds", type="decision",
                         project=project, confidence=0.7)
    weak = [_remember(k, f"User: run the {name} tests Assistant: Done: {n} tests pass for {name}.", type="episode",
                      project=project, source="session-episode")
            for n, name in ((12, "geo-tiler"), (31, "mail-digest"), (47, "quota-keeper"), (58, "pager-bridge"))]
    notes = [_remember(k, f"ledger-sync {what}", project=project, confidence=0.6)
             for what in ("tests run against a real SQLite file", "owns the nightly reconciliation job",
                          "was split out of the billing service in March")]
    return on_topic, weak + notes


def _prompt(k, key: str) -> dict:
    k.sessions.session_start({"session_key": key, "project": "bar", "cwd": "/src/bar",
                              "timestamp": "2026-06-01T09:00:00Z"})
    return k.sessions.user_prompt_submit({"session_key": key, "prompt": "the ledger-sync tests fail again",
                                          "timestamp": "2026-06-01T09:01:00Z"})


def test_nothing_below_the_bar_is_shown_and_the_bar_is_what_leaves_it_out(kenning):
    ranking_cfg = kenning.settings.sessions.ranking
    _world(kenning)
    ranking_cfg.prompt_min_probability = 0.0  # every candidate passes: what the model says of each is recorded
    everything = _prompt(kenning, "all")
    rows = {r["memory_id"]: r for r in of_session(kenning.db.reader(), "all")}
    assert len(rows) >= 6 and set(everything["memory_ids"]) == set(rows)  # within the limits, all shown
    probabilities = sorted({r["probability"] for r in rows.values()})
    assert len(probabilities) >= 3, "the model tells the candidates apart"
    bar = (probabilities[len(probabilities) // 2 - 1] + probabilities[len(probabilities) // 2]) / 2
    ranking_cfg.prompt_min_probability = bar
    answer = _prompt(kenning, "barred")  # the same store, prompt and (empty) session: the same probabilities
    again = {r["memory_id"]: r for r in of_session(kenning.db.reader(), "barred")}
    assert {m: r["probability"] for m, r in again.items()} == pytest.approx({m: r["probability"] for m, r in rows.items()})
    above = {m for m, r in again.items() if r["probability"] >= bar}
    assert above and set(answer["memory_ids"]) == above, "exactly what reaches the bar is shown"
    assert all(r["shown"] == (m in above) for m, r in again.items())


def test_the_committed_bar_is_calibrated_on_its_development_holdout():
    rows = [json.loads(line) for line in gzip.decompress(HOLDOUT.read_bytes()).decode().splitlines() if line.strip()]
    p = np.array([prompt_bar.probability(r["features"]) for r in rows])
    y = np.array([1.0 if r["needed"] else 0.0 for r in rows])
    assert len(rows) >= 500 and 0 < y.mean() < 1
    bins = [(p >= i / 10) & ((p < (i + 1) / 10) if i < 9 else (p <= 1.0)) for i in range(10)]
    ece = sum(abs(p[b].mean() - y[b].mean()) * b.sum() for b in bins if b.any()) / len(y)
    assert ece <= 0.08, ece
    bar = RankingSettings().prompt_min_probability
    above = p >= bar
    assert above.any() and y[above].mean() >= bar, "what passes the bar is needed at least as often as it promises"
    assert y[~above].mean() < bar
    # the probabilities order the candidates: a constant model (the bar ignored) would not
    assert np.corrcoef(p, y)[0, 1] > 0.3


@pytest.mark.parametrize("rating, carried", [(0.9, True), (0.0, False)])
def test_the_task_in_progress_opens_the_next_session_until_it_is_rated_down(kenning, rating, carried):
    kenning.settings.sessions.ranking.prompt_min_probability = 0.0  # the prompt bar is tested above
    project = "tasks"
    note = _remember(kenning, "src/tasks/ledger/drain.py drain_batches() must run inside the write transaction",
                     project=project, confidence=0.6)  # an area note: never opens a session on its own
    kenning.sessions.session_start({"session_key": "t1", "project": project, "timestamp": "2026-06-01T09:00:00Z"})
    first = kenning.sessions.user_prompt_submit({
        "session_key": "t1", "prompt": "drain_batches() in src/tasks/ledger/drain.py breaks the build",
        "timestamp": "2026-06-01T09:01:00Z"})
    assert note in first["memory_ids"]
    kenning.sessions.feedback({"session_key": "t1", "memory_feedback": {note: rating}})
    kenning.sessions.session_end({"session_key": "t1", "timestamp": "2026-06-01T10:00:00Z"})
    nxt = kenning.sessions.session_start({"session_key": "t2", "project": project,
                                          "timestamp": "2026-06-02T09:00:00Z"})
    assert (note in nxt["memory_ids"]) is carried
    assert ("Continuing the task in progress" in nxt["inject"]) is carried
    if carried:  # the next session on another task rates it nothing: the one after does not carry it
        kenning.sessions.feedback({"session_key": "t2", "memory_feedback": {note: 0.0}})
        kenning.sessions.session_end({"session_key": "t2", "timestamp": "2026-06-02T10:00:00Z"})
        third = kenning.sessions.session_start({"session_key": "t3", "project": project,
                                                "timestamp": "2026-06-03T09:00:00Z"})
        assert note not in third["memory_ids"]
