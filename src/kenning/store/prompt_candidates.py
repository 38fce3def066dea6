"""SQL of `prompt_candidates` (issue 32): every memory a prompt's recall offered, with the calibrated
probability that the session needs it, the features it came from and whether it was shown
(kenning.sessions.prompt_bar). Written once per prompt; read by the calibrator's fit
(bench/fit_prompt_bar.py) and by what compares rankings of a prompt pool.
"""

from __future__ import annotations

import json
from typing import TypedDict

from kenning.store.backend import Connection


class PromptCandidate(TypedDict):
    memory_id: str
    recall_rank: int
    probability: float
    features: dict[str, float]
    shown: bool


class RecordedCandidate(PromptCandidate):
    session_key: str
    prompt_index: int
    created_at: str


def record(conn: Connection, session_key: str, prompt_index: int, rows: list[PromptCandidate], at: str) -> None:
    """A prompt's candidates (replaces an earlier record of the same prompt)."""
    conn.execute("DELETE FROM prompt_candidates WHERE session_key = ? AND prompt_index = ?", (session_key, prompt_index))
    conn.executemany(
        "INSERT INTO prompt_candidates(session_key, prompt_index, memory_id, recall_rank, probability, features,"
        " shown, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(session_key, prompt_index, r["memory_id"], r["recall_rank"], float(r["probability"]),
          json.dumps(r["features"], sort_keys=True), 1 if r["shown"] else 0, at) for r in rows],
    )


def of_session(conn: Connection, session_key: str) -> list[RecordedCandidate]:
    """The session's prompt candidates, by prompt, then recall rank."""
    rows = conn.execute(
        "SELECT session_key, prompt_index, memory_id, recall_rank, probability, features, shown, created_at"
        " FROM prompt_candidates WHERE session_key = ? ORDER BY prompt_index, recall_rank", (session_key,),
    ).fetchall()
    return [RecordedCandidate(session_key=r[0], prompt_index=int(r[1]), memory_id=r[2], recall_rank=int(r[3]),
                              probability=float(r[4]), features=json.loads(r[5]), shown=bool(r[6]), created_at=r[7])
            for r in rows]
