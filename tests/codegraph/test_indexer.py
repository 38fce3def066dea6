"""Indexing: incremental by content hash, staleness, .gitignore, syntax errors, impact, closure."""

from __future__ import annotations

import subprocess

from kenning.codegraph import closure
from kenning.codegraph.impact import impact
from kenning.codegraph.indexer import index_path, refresh_files
from kenning.core.clock import now_iso
from kenning.store import codegraph as store

from .helpers import edges, fresh_db, write_tree

CHAIN = {
    "core/low.py": "def base():\n    return 1\n",
    "core/mid.py": "from core.low import base\n\ndef middle():\n    return base() + 1\n",
    "core/top.py": "from core import mid, other\n\ndef top():\n    return mid.middle()\n",
    "core/other.py": "def alone():\n    return 0\n",
    "tests/test_top.py": "from core.top import top\n\ndef test_top():\n    assert top() == 2\n",
}


def _edge_ids(db, path: str) -> set[int]:
    return {r[0] for r in db.reader().execute(
        "SELECT e.id FROM code_edges e JOIN code_files f ON f.id = e.owner_file WHERE f.path = ?", (path,))}


def test_impact_through_two_hops_with_tests(tmp_path):
    db = fresh_db(tmp_path)
    index_path(db, write_tree(tmp_path / "repo", CHAIN), "chain")
    data = impact(db.reader(), "core/low.py:base", project="chain", depth=3)
    by_symbol = {d["symbol"]: d for d in data["dependents"]}
    assert by_symbol["middle"]["depth"] == 1 and by_symbol["top"]["depth"] == 2
    assert by_symbol["top"]["chain"] == ["core/top.py:top", "core/mid.py:middle", "core/low.py:base"]
    assert "alone" not in by_symbol
    assert any(t["symbol"] == "test_top" and t["depth"] == 3 for t in data["tests"])
    shallow = impact(db.reader(), "core.low.base", project="chain", depth=1)  # dotted target
    assert {d["symbol"] for d in shallow["dependents"]} == {"middle", ""}  # caller + importing file


def test_incremental_reindex_rebuilds_only_the_edited_file(tmp_path):
    db = fresh_db(tmp_path)
    repo = write_tree(tmp_path / "repo", CHAIN)
    index_path(db, repo, "chain")
    before_other, before_test = _edge_ids(db, "core/other.py"), _edge_ids(db, "tests/test_top.py")
    (repo / "core/top.py").write_text(   # a body-only edit: no definition or import changed
        "from core import mid, other\n\ndef top():\n    return mid.middle() + other.alone()\n")
    report = index_path(db, repo, "chain")
    assert report.parsed == 1 and report.resolved == 1 and report.closure == "incremental"
    assert _edge_ids(db, "core/other.py") == before_other            # untouched files keep their edges
    assert _edge_ids(db, "tests/test_top.py") == before_test
    assert ("calls", "core/top.py:top", "core/other.py:alone") in edges(db, "chain")
    data = impact(db.reader(), "core/other.py:alone", project="chain")
    assert {d["symbol"] for d in data["dependents"]} >= {"top"}
    assert any(t["symbol"] == "test_top" for t in data["tests"])
    assert index_path(db, repo, "chain").parsed == 0                  # nothing changed: nothing parsed


def test_incremental_closure_equals_a_full_rebuild(tmp_path):
    db = fresh_db(tmp_path)
    repo = write_tree(tmp_path / "repo", CHAIN)
    index_path(db, repo, "chain")
    (repo / "core/mid.py").write_text("def middle():\n    return 2\n")          # drops the call to base
    (repo / "core/low.py").write_text("from core.top import top\n\ndef base():\n    return top()\n")
    for step in ("edit", "remove"):
        if step == "remove":
            (repo / "core/top.py").unlink()                                    # a hop in the middle goes
        assert index_path(db, repo, "chain").closure == "incremental"
        got = set(db.reader().execute("SELECT anchor, node, depth FROM code_closure").fetchall())
        expected = {(a, n, d) for a, n, d, _, _ in closure.full_rows(store.dependency_adjacency(db.reader(), "chain"))}
        assert {tuple(r) for r in got} == expected, step


def test_stale_edges_are_never_mixed_into_answers(tmp_path):
    db = fresh_db(tmp_path)
    repo = write_tree(tmp_path / "repo", CHAIN)
    index_path(db, repo, "chain")
    mid = store.file_by_path(db.reader(), "chain", "core/mid.py")["id"]
    with db.with_write_tx() as conn:
        store.mark_stale(conn, [mid], now_iso())          # what an edit event does first
    data = impact(db.reader(), "core/low.py:base", project="chain", depth=3)
    assert data["stale_files"] == ["core/mid.py"]
    assert {d["symbol"] for d in data["dependents"]} == set()  # middle is stale; top is reached only through it
    report = refresh_files(db, "chain", [str(repo / "core/mid.py")])
    assert report.files == 1
    data = impact(db.reader(), "core/low.py:base", project="chain", depth=3)
    assert data["stale_files"] == [] and {"middle", "top"} <= {d["symbol"] for d in data["dependents"]}


def test_gitignore_is_honoured_in_and_out_of_git(tmp_path):
    files = {
        ".gitignore": "ignored/\n*.gen.py\n",
        "keep.py": "def a():\n    return 1\n",
        "ignored/skip.py": "def b():\n    return 2\n",
        "x.gen.py": "def c():\n    return 3\n",
        "sub/.gitignore": "local.py\n",
        "sub/local.py": "def d():\n    return 4\n",
        "sub/kept.py": "def e():\n    return 5\n",
        "node_modules/dep/index.js": "function f() {}\n",
        "big.py": "x = 1\n" * 200_000,
    }
    for variant in ("plain", "git"):
        repo = write_tree(tmp_path / variant, files)
        if variant == "git":
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
        db = fresh_db(tmp_path / variant)
        index_path(db, repo, variant)
        assert sorted(store.file_states(db.reader(), variant)) == ["keep.py", "sub/kept.py"], variant


def test_a_syntax_error_in_one_file_indexes_the_rest(tmp_path):
    db = fresh_db(tmp_path)
    repo = write_tree(tmp_path / "repo", {
        "good.py": "from broken import fine\n\ndef g():\n    return fine()\n",
        "broken.py": "def fine():\n    return 1\n\ndef bad(:\n    pass\n",
    })
    report = index_path(db, repo, "err")
    assert report.syntax_errors == ["broken.py:4"]
    assert ("calls", "good.py:g", "broken.py:fine") in edges(db, "err")


def test_removed_file_drops_its_nodes_and_unresolves_callers(tmp_path):
    db = fresh_db(tmp_path)
    repo = write_tree(tmp_path / "repo", CHAIN)
    index_path(db, repo, "chain")
    (repo / "core/low.py").unlink()
    report = index_path(db, repo, "chain")
    assert report.removed == 1
    got = edges(db, "chain")
    assert ("calls_external", "core/mid.py:middle", "base") in got
    assert not any("core/low.py" in e[2] for e in got if e[0] == "calls")


def test_definition_added_or_removed_reresolves_only_the_files_that_name_it(tmp_path):
    db = fresh_db(tmp_path)
    repo = write_tree(tmp_path / "repo", {
        "go.mod": "module example.com/x\n",
        "pkg/a.go": "package pkg\n\nfunc Helper() int { return 1 }\n",
        "pkg/b.go": "package pkg\n\nfunc UseIt() int { return Helper() + Later() }\n",   # no import edge
        "pkg/c.go": "package pkg\n\nfunc Alone() int { return 0 }\n",
    })
    index_path(db, repo, "go")
    assert ("calls_external", "pkg/b.go:UseIt", "Later") in edges(db, "go")
    untouched = _edge_ids(db, "pkg/c.go")
    (repo / "pkg/a.go").write_text("package pkg\n\nfunc Later() int { return 2 }\n")   # Helper gone, Later new
    report = index_path(db, repo, "go")
    assert report.parsed == 1 and report.resolved == 2                                 # a.go and b.go
    got = edges(db, "go")
    assert ("calls", "pkg/b.go:UseIt", "pkg/a.go:Later") in got
    assert ("calls_external", "pkg/b.go:UseIt", "Helper") in got
    assert _edge_ids(db, "pkg/c.go") == untouched
