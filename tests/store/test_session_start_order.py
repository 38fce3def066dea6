"""Session start's two top-k candidate queries give the same memories in the same order on both
backends, equal to the formulas computed here: on PostgreSQL they walk m024's indexes, one walk
for the project and one for global memories (`store.sessions.project_then_global`), where the
generic query sorts every memory of the project."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.ranking import standing_candidates
from kenning.store.sessions import top_by_effective_score

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def fill(conn) -> list[dict]:
    """120 memories over two projects and none (global): importance, age, last access, pinned,
    verified, confidence, review, deleted, superseded and type vary; a few are created after AT."""
    rng = random.Random(5)
    rows = []
    for i in range(120):
        created = AT - timedelta(days=rng.uniform(-3, 200))
        accessed = created + timedelta(days=rng.uniform(0, 30)) if rng.random() < 0.4 else None
        if accessed is not None and accessed > AT:
            accessed = AT
        row = {"project": rng.choice(["alpha", "beta", None]), "importance": round(rng.uniform(0.05, 0.95), 3),
               "pinned": int(rng.random() < 0.08), "user_verified": int(rng.random() < 0.1),
               "confidence": rng.choice([0.4, 0.9, 1.0]), "needs_review": int(rng.random() < 0.15),
               "is_deleted": int(rng.random() < 0.05), "type": rng.choice(["fact", "fact", "decision", "episode"]),
               "created_at": iso(created), "last_accessed_at": iso(accessed) if accessed else None}
        memory_id, _ = store.insert_memory(conn, MemoryDraft(content=f"memory number {i} about thing {i * 7}",
                                                             project=row["project"]))
        conn.execute("UPDATE memories SET importance = ?, pinned = ?, user_verified = ?, confidence = ?,"
                     " needs_review = ?, is_deleted = ?, type = ?, created_at = ?, last_accessed_at = ? WHERE id = ?",
                     (row["importance"], row["pinned"], row["user_verified"], row["confidence"], row["needs_review"],
                      row["is_deleted"], row["type"], row["created_at"], row["last_accessed_at"], memory_id))
        row.update(id=memory_id, rid=conn.execute("SELECT rid FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])
        rows.append(row)
    superseded = rows[3]["id"]
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (rows[4]["id"], superseded))
    rows[3]["is_deleted"] = 1  # out of scope either way
    return rows


def in_scope(row: dict, project: str) -> bool:
    return not row["is_deleted"] and row["project"] in (project, None) and row["created_at"] <= iso(AT)


def effective(row: dict) -> float:
    if row["pinned"]:
        return 1.0
    last = datetime.fromisoformat((row["last_accessed_at"] or row["created_at"]).replace("Z", "+00:00"))
    return row["importance"] * 0.95 ** max(0.0, (AT - last).total_seconds() / 86400)


@pytest.mark.parametrize("project", ["alpha", "beta"])
def test_session_start_candidates_in_the_formulas_order(db, project):
    with db.with_write_tx() as conn:
        rows = fill(conn)
    conn = db.reader()
    scoped = [r for r in rows if in_scope(r, project)]
    want = [r["id"] for r in sorted(scoped, key=lambda r: (-effective(r), -r["rid"]))][:25]
    assert top_by_effective_score(conn, project=project, at=iso(AT), limit=25) == want
    standing = [r for r in scoped if r["type"] != "episode"
                and (r["pinned"] or r["user_verified"] or (r["confidence"] >= 0.8 and not r["needs_review"]))]
    want = [r["id"] for r in sorted(standing, key=lambda r: (-r["pinned"], -r["user_verified"], -r["importance"],
                                                              -r["rid"]))][:20]
    assert len(want) == 20
    assert standing_candidates(conn, project=project, at=iso(AT), viewer=None, min_confidence=0.8, useful_rating=0.7,
                               raw_types=["episode"], raw_sources=["transcript"], limit=20) == want
