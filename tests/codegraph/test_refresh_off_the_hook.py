"""A session start's code refresh is off the hook's call, its store lookup too (issue 34).

The hook's thread hands the session's directory to a refresh thread and reads nothing from the code graph: which
indexed project holds the directory (`project_for_path`) is read on that thread, which then indexes what changed.
Shown on the real store's connections: SQLite's statement trace on the hook thread's own reader (each thread has its
own), and the refresh thread joined before what it indexed is read. No timing is measured.
"""

from __future__ import annotations

import threading

from kenning.codegraph.events import refresh_in_background
from kenning.codegraph.indexer import index_path
from kenning.core.events import SessionStarted
from kenning.store import codegraph as cgstore

from .helpers import fresh_db, write_tree

REPO = {"shop/__init__.py": "", "shop/prices.py": "def tax(x):\n    return x * 0.2\n"}
CODE_GRAPH_READ = "code_projects"  # the table the project lookup reads (store.codegraph.list_projects)


def _join_refreshes() -> None:
    """Wait for every session-start refresh thread there is (each started before its call returned)."""
    for thread in threading.enumerate():
        if thread.name.startswith("codegraph-refresh"):
            thread.join(timeout=300)
            assert not thread.is_alive(), thread.name


def _statements_on_this_thread(conn, call) -> tuple[object, list[str]]:
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        return call(), seen
    finally:
        conn.set_trace_callback(None)


def test_the_session_start_hook_reads_no_code_graph_and_the_refresh_thread_indexes_what_changed(kenning, tmp_path):
    repo = write_tree(tmp_path / "shop", REPO)
    kenning.code_index(repo, "shop")
    (repo / "shop" / "audit.py").write_text("from shop.prices import tax\n\ndef audit(x):\n    return tax(x)\n")

    event = SessionStarted(session_key="s-refresh", cwd=str(repo / "shop"), project="shop")
    answer, seen = _statements_on_this_thread(kenning.db.reader(), lambda: kenning.hooks.handle(event))
    assert answer["created"] is True and seen  # the session start itself read and wrote on this thread
    assert not [s for s in seen if CODE_GRAPH_READ in s]  # but the project lookup was not among them

    _join_refreshes()
    assert cgstore.defined_names(kenning.db.reader(), "shop", ["audit", "tax"]) == {"audit", "tax"}


def test_a_directory_nothing_indexes_is_queued_and_left_alone(tmp_path):
    db = fresh_db(tmp_path)
    try:
        repo = write_tree(tmp_path / "shop", REPO)
        elsewhere = write_tree(tmp_path / "other", {"x.py": "def x():\n    return 1\n"})
        index_path(db, repo, "shop")
        queued, seen = _statements_on_this_thread(db.reader(), lambda: refresh_in_background(db, str(elsewhere)))
        assert queued is True and seen == []  # queued; the caller's thread read nothing
        assert refresh_in_background(db, None) is False and refresh_in_background(db, "") is False
        _join_refreshes()
        assert [p["project"] for p in cgstore.list_projects(db.reader())] == ["shop"]  # nothing new indexed
        assert cgstore.defined_names(db.reader(), "shop", ["x"]) == set()
    finally:
        db.close()
