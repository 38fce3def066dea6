"""Memories attached to code: links from related_files and text, the neighbourhood query, and
the (opt-in) code_neighbourhood recall stage — with the real service and embedding model."""

from __future__ import annotations

from kenning.codegraph.indexer import index_path
from kenning.codegraph.links import neighbourhood_memories
from kenning.core.types import MemoryDraft

from .helpers import write_tree

REPO = {
    "retryx/__init__.py": "",
    "retryx/backoff.py": "def delay(n):\n    return 0.1 * 2 ** n\n",
    "retryx/retry.py": "from retryx.backoff import delay\n\nclass Retrier:\n    def run(self, fn):\n"
                       "        return [delay(i) for i in range(7)]\n",
    "app/client.py": "from retryx.retry import Retrier\n\ndef fetch():\n    return Retrier().run(None)\n",
    "app/unrelated.py": "def noop():\n    return None\n",
}


def test_links_neighbourhood_and_boost(kenning, tmp_path):
    repo = write_tree(tmp_path / "repo", REPO)
    before = kenning.remember(MemoryDraft(
        "MAX_ATTEMPTS is 7 on purpose: measured against the upstream rate-limit window", project="retryx",
        related_files=["retryx/retry.py"])).id
    report = index_path(kenning.db, repo, "retryx")
    assert report.memory_links == 1                                   # linked when the project got indexed
    after = kenning.remember(MemoryDraft("Keep `Retrier.run` synchronous; callers rely on it", project="retryx")).id
    by_path = kenning.remember(MemoryDraft("backoff.py jitter must stay off for the budget math", project="retryx")).id
    noise = kenning.remember(MemoryDraft("The retry budget for the payment service is 3 attempts", project="retryx")).id
    conn = kenning.db.reader()
    links = {tuple(r) for r in conn.execute("SELECT memory_id, path, symbol, reason FROM code_memory_links")}
    assert (before, "retryx/retry.py", "", "related_files") in links
    assert (after, "retryx/retry.py", "Retrier.run", "text_symbol") in links          # in-tx hook
    assert (by_path, "retryx/backoff.py", "", "text_path") in links                   # unique path suffix
    assert not any(m == noise for m, *_ in links)

    around = neighbourhood_memories(conn, [str(repo / "app/client.py")])
    assert around["project"] == "retryx" and around["files"]["app/client.py"] == 0
    assert {before, after} <= {m["id"] for m in around["memories"]}   # client.py depends on retry.py
    assert neighbourhood_memories(conn, ["app/unrelated.py"], project="retryx")["memories"] == []

    query = "fetch in app/client.py retries too often, what is the retry budget?"
    plain = {h.memory.id: h.score for h in kenning.recall(query, limit=10, config="default")}
    boosted = kenning.recall(query, limit=10, config="code")
    top = max(plain.values())
    scores = {h.memory.id: h.score for h in boosted}
    reasons = {h.memory.id: h.reasons for h in boosted}
    # retry.py is one hop from client.py: +weight * decay**1 * top score (defaults 1.0, 0.5)
    assert abs(scores[before] - (plain[before] + 0.5 * top)) < 1e-9
    assert "code:retryx/retry.py" in reasons[before]
    assert scores[noise] == plain[noise] and not any(r.startswith("code:") for r in reasons[noise])
    assert scores[by_path] == plain[by_path]   # backoff.py is two hops away: outside depth 1
