"""Module boundaries: two clusters of files that import within themselves come out as two modules."""

from __future__ import annotations

from kenning.codegraph.indexer import index_path
from kenning.codegraph.modules import module_boundaries, scope_hint

from .helpers import fresh_db, write_tree


def _cluster(prefix: str, n: int) -> dict[str, str]:
    files = {}
    for i in range(n):
        imports = "".join(f"from {prefix}.m{j} import f{j}\n" for j in range(i))
        calls = " + ".join([f"f{j}()" for j in range(i)] or ["0"])
        files[f"{prefix}/m{i}.py"] = f"{imports}\ndef f{i}():\n    return {calls}\n"
    return files


def test_two_clusters_become_two_modules(tmp_path):
    db = fresh_db(tmp_path)
    files = {**_cluster("billing", 5), **_cluster("search", 5),
             "billing/bridge.py": "from search.m0 import f0\n\ndef b():\n    return f0()\n"}
    index_path(db, write_tree(tmp_path / "repo", files), "two")
    data = module_boundaries(db.reader(), "two")
    labels = {m["label"]: set(m["files"]) for m in data["modules"]}
    assert set(labels) == {"billing", "search"}
    assert "billing/bridge.py" in labels["search"]  # it only depends on search: the graph, not the folder, decides
    assert data["modularity"] > 0.3
    assert scope_hint(db.reader(), "two", ["search/m1.py", "search/m3.py"]) == "search"
    assert module_boundaries(db.reader(), "nothing-here")["modules"] == []
