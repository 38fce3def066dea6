"""Small helpers for the code-graph tests: write a repository, open a real database, read edges."""

from __future__ import annotations

from pathlib import Path

from kenning.store.db import Database, open_database


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def fresh_db(tmp_path: Path) -> Database:
    return open_database(tmp_path / "kenning.db")


def edges(db: Database, project: str, kinds: tuple[str, ...] | None = None) -> set[tuple[str, str, str]]:
    """(kind, 'path:qualname' of src, 'path:qualname' of dst or the external name) of fresh edges."""
    rows = db.reader().execute(
        "SELECT e.kind, fa.path || ':' || a.qualname AS src, "
        "COALESCE(fb.path || ':' || b.qualname, e.external) AS dst "
        "FROM code_edges e JOIN code_nodes a ON a.id = e.src JOIN code_files fa ON fa.id = a.file_id "
        "LEFT JOIN code_nodes b ON b.id = e.dst LEFT JOIN code_files fb ON fb.id = b.file_id "
        "WHERE fa.project = ? AND e.stale_at IS NULL", (project,)).fetchall()
    return {(r[0], r[1], r[2]) for r in rows if kinds is None or r[0] in kinds}


def nodes(db: Database, project: str) -> set[tuple[str, str, str]]:
    rows = db.reader().execute(
        "SELECT n.kind, f.path, n.qualname FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
        "WHERE f.project = ?", (project,)).fetchall()
    return {(r[0], r[1], r[2]) for r in rows}
