"""SQL of the code knowledge graph (tables from migration 055): projects, files, nodes, edges,
the reverse-dependency closure and memory links. Callers hold the write transaction."""

from __future__ import annotations

import json
from typing import Iterable, NotRequired, Sequence, TypedDict, TypeVar, cast

from kenning.store.backend import Connection

T = TypeVar("T")


class CodeProject(TypedDict):
    """A code_projects row; `files` (a count) in list_projects."""

    project: str
    root: str
    go_module: str | None
    indexed_at: str | None
    created_at: str
    files: NotRequired[int]


class FileState(TypedDict):
    """What re-indexing compares of a file (file_states)."""

    id: int
    path: str
    content_hash: str
    size: int
    mtime_ns: int
    stale_at: str | None


class IndexFile(TypedDict):
    """A file as the resolver's project index knows it (index_rows)."""

    id: int
    path: str
    language: str
    module: str
    is_test: int


class CodeFile(IndexFile):
    """A code_files row."""

    project: str
    content_hash: str
    size: int
    mtime_ns: int
    error_line: int | None
    facts: str
    stale_at: str | None


class CodeNode(TypedDict):
    """A code_nodes row; `path` (its file's) in nodes_named."""

    id: int
    file_id: int
    kind: str
    name: str
    qualname: str
    start_line: int | None
    end_line: int | None
    path: NotRequired[str]


class ClosureRow(TypedDict):
    """A dependent of an anchor within the closure, with its node and its file's staleness."""

    anchor: int | None  # None: found past the closure's depth (codegraph.impact)
    node: int
    depth: int
    via: int
    kind: str
    node_kind: str
    qualname: str
    start_line: int | None
    path: str
    is_test: int
    stale_at: str | None


class NodeInfo(TypedDict):
    """A node with its file (nodes_info)."""

    id: int
    kind: str
    name: str
    qualname: str
    start_line: int | None
    end_line: int | None
    path: str
    is_test: int
    stale_at: str | None


class LinkedMemory(TypedDict):
    """A live memory linked to a file or symbol (memories_linked)."""

    memory_id: str
    path: str
    symbol: str
    reason: str
    content: str
    type: str
    importance: float

DEPENDENCY_KINDS = ("calls", "imports", "imports_symbol", "extends", "implements")
_DEP_SQL = "(" + ",".join(f"'{k}'" for k in DEPENDENCY_KINDS) + ")"
_CHUNK = 500


def _chunks(items: list[T], size: int = _CHUNK) -> Iterable[list[T]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


# -- projects ------------------------------------------------------------------------------------
def upsert_project(conn: Connection, project: str, root: str, go_module: str | None, now: str) -> None:
    conn.execute(
        "INSERT INTO code_projects(project, root, go_module, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(project) DO UPDATE SET root = excluded.root, go_module = excluded.go_module",
        (project, root, go_module, now),
    )


def set_indexed(conn: Connection, project: str, now: str) -> None:
    conn.execute("UPDATE code_projects SET indexed_at = ? WHERE project = ?", (now, project))


def get_project(conn: Connection, project: str) -> CodeProject | None:
    row = conn.execute("SELECT * FROM code_projects WHERE project = ?", (project,)).fetchone()
    return cast(CodeProject, dict(row)) if row else None


def list_projects(conn: Connection) -> list[CodeProject]:
    rows = conn.execute(
        "SELECT p.*, (SELECT COUNT(*) FROM code_files f WHERE f.project = p.project) AS files "
        "FROM code_projects p ORDER BY p.project").fetchall()
    return [cast(CodeProject, dict(r)) for r in rows]


# -- files and nodes -----------------------------------------------------------------------------
def file_states(conn: Connection, project: str) -> dict[str, FileState]:
    rows = conn.execute(
        "SELECT id, path, content_hash, size, mtime_ns, stale_at FROM code_files WHERE project = ?",
        (project,)).fetchall()
    return {r["path"]: cast(FileState, dict(r)) for r in rows}


class FileRecord(TypedDict):
    """One parsed file as the indexer writes it (code_files)."""

    path: str
    language: str
    module: str | None
    content_hash: str
    size: int
    mtime_ns: int
    is_test: bool
    error_line: int | None
    facts: dict[str, object]


def upsert_file(conn: Connection, project: str, row: FileRecord, now: str) -> int:
    cur = conn.execute(
        "INSERT INTO code_files(project, path, language, module, content_hash, size, mtime_ns, is_test,"
        " error_line, facts, stale_at, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(project, path) DO UPDATE SET language = excluded.language, module = excluded.module,"
        " content_hash = excluded.content_hash, size = excluded.size, mtime_ns = excluded.mtime_ns,"
        " is_test = excluded.is_test, error_line = excluded.error_line, facts = excluded.facts,"
        " stale_at = excluded.stale_at, indexed_at = excluded.indexed_at RETURNING id",
        (project, row["path"], row["language"], row["module"], row["content_hash"], row["size"],
         row["mtime_ns"], int(row["is_test"]), row["error_line"], json.dumps(row["facts"]), now, now),
    )
    return int(cur.fetchone()[0])


def touch_files(conn: Connection, stats: list[tuple[int, int, int]]) -> None:
    """(file id, size, mtime_ns) for files whose content hash did not change."""
    conn.executemany("UPDATE code_files SET size = ?, mtime_ns = ? WHERE id = ?",
                     [(size, mtime, file_id) for file_id, size, mtime in stats])


def replace_nodes(conn: Connection, file_id: int, nodes: list[tuple[str, str, str, int | None, int | None]]
                  ) -> tuple[dict[str, int], list[int]]:
    """Make the file's nodes exactly `nodes` (kind, name, qualname, start, end), keeping the ids of
    qualnames that survive. Returns (qualname → id, ids of removed nodes)."""
    existing = {r["qualname"]: r["id"] for r in conn.execute(
        "SELECT id, qualname FROM code_nodes WHERE file_id = ?", (file_id,))}
    wanted = {n[2] for n in nodes}
    removed = [node_id for qualname, node_id in existing.items() if qualname not in wanted]
    for chunk in _chunks(removed):
        conn.execute(f"DELETE FROM code_nodes WHERE id IN ({_marks(len(chunk))})", chunk)
    ids = {}
    for kind, name, qualname, start, end in nodes:
        if qualname in existing:
            conn.execute("UPDATE code_nodes SET kind = ?, name = ?, start_line = ?, end_line = ? WHERE id = ?",
                         (kind, name, start, end, existing[qualname]))
            ids[qualname] = existing[qualname]
        else:
            ids[qualname] = conn.execute(
                "INSERT INTO code_nodes(file_id, kind, name, qualname, start_line, end_line) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id", (file_id, kind, name, qualname, start, end)
            ).fetchone()[0]
    return ids, removed


def delete_files(conn: Connection, file_ids: list[int]) -> list[int]:
    """Delete files (nodes and edges cascade); returns the removed node ids."""
    removed: list[int] = []
    for chunk in _chunks(file_ids):
        removed += [r[0] for r in conn.execute(
            f"SELECT id FROM code_nodes WHERE file_id IN ({_marks(len(chunk))})", chunk)]
        conn.execute(f"DELETE FROM code_files WHERE id IN ({_marks(len(chunk))})", chunk)
    return removed


def index_rows(conn: Connection, project: str) -> tuple[list[IndexFile], list[tuple[int, int, str]]]:
    """Every file (id, path, language, module, is_test) and node (id, file_id, qualname) of a project."""
    files = [cast(IndexFile, dict(r)) for r in conn.execute(
        "SELECT id, path, language, module, is_test FROM code_files WHERE project = ?", (project,))]
    nodes = [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT n.id, n.file_id, n.qualname FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
        "WHERE f.project = ?", (project,))]
    return files, nodes


def load_facts(conn: Connection, file_id: int) -> dict[str, object] | None:
    row = conn.execute("SELECT facts FROM code_files WHERE id = ?", (file_id,)).fetchone()
    return json.loads(row[0]) if row else None


# -- edges ---------------------------------------------------------------------------------------
def mark_stale(conn: Connection, file_ids: list[int], now: str) -> None:
    for chunk in _chunks(file_ids):
        marks = _marks(len(chunk))
        conn.execute(f"UPDATE code_files SET stale_at = ? WHERE id IN ({marks})", [now, *chunk])
        conn.execute(f"UPDATE code_edges SET stale_at = ? WHERE owner_file IN ({marks})", [now, *chunk])


def dependency_edges_owned(conn: Connection, file_ids: list[int]) -> set[tuple[int, int, str]]:
    out: set[tuple[int, int, str]] = set()
    for chunk in _chunks(file_ids):
        out |= {(r[0], r[1], r[2]) for r in conn.execute(
            f"SELECT src, dst, kind FROM code_edges WHERE owner_file IN ({_marks(len(chunk))}) "
            f"AND dst IS NOT NULL AND kind IN {_DEP_SQL}", chunk)}
    return out


def replace_edges(conn: Connection, file_id: int, edges: list[tuple[int, int | None, str, str | None, int | None]]) -> None:
    """Swap a file's edges for fresh ones (src, dst, kind, external, line) and clear its staleness."""
    conn.execute("DELETE FROM code_edges WHERE owner_file = ?", (file_id,))
    conn.executemany(
        "INSERT INTO code_edges(owner_file, src, dst, kind, external, line) VALUES (?, ?, ?, ?, ?, ?)",
        [(file_id, *e) for e in edges])
    conn.execute("UPDATE code_files SET stale_at = NULL WHERE id = ?", (file_id,))


def files_depending_on(conn: Connection, project: str, file_ids: list[int], modules: list[str]) -> set[int]:
    """Files with an edge into these files' nodes, or an unresolved import of one of `modules`."""
    out: set[int] = set()
    for chunk in _chunks(file_ids):
        out |= {r[0] for r in conn.execute(
            "SELECT DISTINCT e.owner_file FROM code_nodes n JOIN code_edges e ON e.dst = n.id "
            f"WHERE n.file_id IN ({_marks(len(chunk))})", chunk)}
    for names in _chunks(modules):
        out |= {r[0] for r in conn.execute(
            "SELECT DISTINCT e.owner_file FROM code_edges e JOIN code_files f ON f.id = e.owner_file "
            f"WHERE f.project = ? AND e.dst IS NULL AND e.external IN ({_marks(len(names))})",
            [project, *names])}
    return out


def dependency_adjacency(conn: Connection, project: str) -> list[tuple[int, int, str]]:
    """Every fresh resolved dependency edge (src, dst, kind) of a project."""
    return [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT e.src, e.dst, e.kind FROM code_edges e JOIN code_files f ON f.id = e.owner_file "
        f"WHERE f.project = ? AND e.dst IS NOT NULL AND e.kind IN {_DEP_SQL} AND e.stale_at IS NULL",
        (project,))]


def dependents_of(conn: Connection, nodes: list[int]) -> list[tuple[int, int, str]]:
    """Fresh dependency edges (src, dst, kind) pointing at `nodes`."""
    out = []
    for chunk in _chunks(nodes):
        out += [(r[0], r[1], r[2]) for r in conn.execute(
            f"SELECT src, dst, kind FROM code_edges WHERE dst IN ({_marks(len(chunk))}) "
            f"AND kind IN {_DEP_SQL} AND stale_at IS NULL", chunk)]
    return out


# -- closure -------------------------------------------------------------------------------------
def closure_anchors_reaching(conn: Connection, nodes: list[int], max_depth: int) -> set[int]:
    out: set[int] = set()
    for chunk in _chunks(nodes):
        out |= {r[0] for r in conn.execute(
            f"SELECT DISTINCT anchor FROM code_closure WHERE node IN ({_marks(len(chunk))}) AND depth <= ?",
            [*chunk, max_depth])}
    return out


def delete_closure(conn: Connection, anchors: list[int], nodes: Sequence[int] = ()) -> None:
    for chunk in _chunks(list(anchors)):
        conn.execute(f"DELETE FROM code_closure WHERE anchor IN ({_marks(len(chunk))})", chunk)
    for chunk in _chunks(list(nodes)):
        conn.execute(f"DELETE FROM code_closure WHERE node IN ({_marks(len(chunk))})", chunk)


def delete_project_closure(conn: Connection, project: str) -> None:
    conn.execute(
        "DELETE FROM code_closure WHERE anchor IN (SELECT n.id FROM code_nodes n "
        "JOIN code_files f ON f.id = n.file_id WHERE f.project = ?)", (project,))


def insert_closure(conn: Connection, rows: list[tuple[int, int, int, int, str]]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO code_closure(anchor, node, depth, via, kind) VALUES (?, ?, ?, ?, ?)", rows)


def closure_rows(conn: Connection, anchors: list[int], max_depth: int) -> list[ClosureRow]:
    """Dependents of `anchors` within `max_depth`, with node details and the node file's staleness."""
    return [cast(ClosureRow, dict(r)) for r in conn.execute(
        "SELECT c.anchor, c.node, c.depth, c.via, c.kind, n.kind AS node_kind, n.qualname, n.start_line,"
        " f.path, f.is_test, f.stale_at FROM code_closure c JOIN code_nodes n ON n.id = c.node "
        f"JOIN code_files f ON f.id = n.file_id WHERE c.anchor IN ({_marks(len(anchors))}) AND c.depth <= ?",
        [*anchors, max_depth])]


def nodes_info(conn: Connection, nodes: list[int]) -> list[NodeInfo]:
    out: list[NodeInfo] = []
    for chunk in _chunks(nodes):
        out += [cast(NodeInfo, dict(r)) for r in conn.execute(
            "SELECT n.id, n.kind, n.name, n.qualname, n.start_line, n.end_line, f.path, f.is_test, f.stale_at "
            f"FROM code_nodes n JOIN code_files f ON f.id = n.file_id WHERE n.id IN ({_marks(len(chunk))})",
            chunk)]
    return out


# -- targets ------------------------------------------------------------------------------------
def file_by_path(conn: Connection, project: str, path: str) -> CodeFile | None:
    row = conn.execute("SELECT * FROM code_files WHERE project = ? AND path = ?", (project, path)).fetchone()
    return cast(CodeFile, dict(row)) if row else None


def files_by_module(conn: Connection, project: str, module: str) -> list[CodeFile]:
    return [cast(CodeFile, dict(r)) for r in conn.execute(
        "SELECT * FROM code_files WHERE project = ? AND module = ?", (project, module))]


def file_nodes(conn: Connection, file_id: int, qualname: str | None = None) -> list[CodeNode]:
    """A file's nodes; with `qualname`, that node and the ones nested in it."""
    if qualname is None:
        rows = conn.execute("SELECT * FROM code_nodes WHERE file_id = ?", (file_id,))
    else:
        rows = conn.execute(
            "SELECT * FROM code_nodes WHERE file_id = ? AND (qualname = ? OR qualname LIKE ? ESCAPE '\\')",
            (file_id, qualname, qualname.replace("_", "\\_").replace("%", "\\%") + ".%"))
    return [cast(CodeNode, dict(r)) for r in rows]


def nodes_named(conn: Connection, project: str, name: str, limit: int = 20) -> list[CodeNode]:
    return [cast(CodeNode, dict(r)) for r in conn.execute(
        "SELECT n.*, f.path FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
        "WHERE f.project = ? AND n.name = ? LIMIT ?", (project, name, limit))]


# -- memory links -------------------------------------------------------------------------------
def link_memory(conn: Connection, memory_id: str, project: str, path: str, symbol: str, reason: str,
                now: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO code_memory_links(memory_id, project, path, symbol, reason, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)", (memory_id, project, path, symbol, reason, now))


def memories_linked(conn: Connection, project: str, paths: list[str], limit: int = 50) -> list[LinkedMemory]:
    """Live memories linked to any of `paths` (file or symbol links), most important first."""
    out: list[LinkedMemory] = []
    for chunk in _chunks(paths):
        out += [cast(LinkedMemory, dict(r)) for r in conn.execute(
            "SELECT l.memory_id, l.path, l.symbol, l.reason, m.content, m.type, m.importance "
            "FROM code_memory_links l JOIN memories m ON m.id = l.memory_id "
            f"WHERE l.project = ? AND l.path IN ({_marks(len(chunk))}) AND m.is_deleted = 0",
            [project, *chunk])]
    out.sort(key=lambda r: -(r["importance"] or 0))
    return out[:limit]


def project_paths(conn: Connection, project: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT path FROM code_files WHERE project = ?", (project,))]


class CodeGraphStats(TypedDict):
    files: int
    files_with_syntax_errors: int
    stale_files: int
    nodes: int
    edges: dict[str, int]
    closure_rows: int


def graph_stats(conn: Connection, project: str) -> CodeGraphStats:
    files = conn.execute("SELECT COUNT(*), SUM(error_line IS NOT NULL), SUM(stale_at IS NOT NULL) "
                         "FROM code_files WHERE project = ?", (project,)).fetchone()
    nodes = conn.execute("SELECT COUNT(*) FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
                         "WHERE f.project = ?", (project,)).fetchone()[0]
    edges = {r[0]: r[1] for r in conn.execute(
        "SELECT e.kind, COUNT(*) FROM code_edges e JOIN code_files f ON f.id = e.owner_file "
        "WHERE f.project = ? GROUP BY e.kind", (project,))}
    closure = conn.execute(
        "SELECT COUNT(*) FROM code_closure WHERE anchor IN (SELECT n.id FROM code_nodes n "
        "JOIN code_files f ON f.id = n.file_id WHERE f.project = ?)", (project,)).fetchone()[0]
    return {"files": files[0], "files_with_syntax_errors": files[1] or 0, "stale_files": files[2] or 0,
            "nodes": nodes, "edges": edges, "closure_rows": closure}


def defined_names(conn: Connection, project: str, names: Iterable[str]) -> set[str]:
    """Which of `names` some indexed definition of the project is called (code_nodes.name)."""
    out: set[str] = set()
    for chunk in _chunks(sorted(set(names))):
        out |= {r[0] for r in conn.execute(
            "SELECT DISTINCT n.name FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
            f"WHERE f.project = ? AND n.name IN ({_marks(len(chunk))})", [project, *chunk])}
    return out


def indexed_projects(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT project FROM code_projects")]


def paths_matching(conn: Connection, project: str, token: str, limit: int = 4) -> list[str]:
    """Indexed paths equal to `token` or ending in `/token`."""
    like = "%/" + token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return [r[0] for r in conn.execute(
        "SELECT path FROM code_files WHERE project = ? AND (path = ? OR path LIKE ? ESCAPE '\\') LIMIT ?",
        (project, token, like, limit))]


def symbols_matching(conn: Connection, project: str, dotted: str, limit: int = 3) -> list[tuple[str, str]]:
    """(path, qualname) of definitions named `dotted` (a qualname, or a bare name)."""
    name = dotted.rsplit(".", 1)[-1]
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT f.path, n.qualname FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
        "WHERE n.name = ? AND f.project = ? AND n.qualname != '' AND (n.qualname = ? OR ? = n.name) LIMIT ?",
        (name, project, dotted, dotted, limit))]


def memories_for_linking(conn: Connection, project: str) -> list[tuple[str, str, list[str]]]:
    """(id, content, related_files) of live memories in `project` or in no project."""
    return [(r[0], r[1], json.loads(r[2] or "[]")) for r in conn.execute(
        "SELECT id, content, related_files FROM memories WHERE is_deleted = 0 AND (project = ? OR project IS NULL)",
        (project,))]


def neighbour_paths(conn: Connection, project: str, paths: list[str], depth: int) -> dict[str, int]:
    """Files around `paths`: their dependents within `depth` hops (closure) and the files they
    depend on directly; path → hop distance (0 for the files themselves)."""
    out = {p: 0 for p in paths}
    for chunk in _chunks(paths):
        marks = _marks(len(chunk))
        for path, hops in conn.execute(
                "SELECT fd.path, MIN(c.depth) FROM code_files f JOIN code_nodes n ON n.file_id = f.id "
                "JOIN code_closure c ON c.anchor = n.id JOIN code_nodes d ON d.id = c.node "
                "JOIN code_files fd ON fd.id = d.file_id "
                f"WHERE f.project = ? AND f.path IN ({marks}) AND c.depth <= ? AND fd.stale_at IS NULL GROUP BY fd.path",
                [project, *chunk, depth]):
            out.setdefault(path, hops)
        for (path,) in conn.execute(
                "SELECT DISTINCT fd.path FROM code_files f JOIN code_edges e ON e.owner_file = f.id "
                "JOIN code_nodes d ON d.id = e.dst JOIN code_files fd ON fd.id = d.file_id "
                f"WHERE f.project = ? AND f.path IN ({marks}) AND e.stale_at IS NULL "
                f"AND e.kind IN {_DEP_SQL}", [project, *chunk]):
            out.setdefault(path, 1)
    return out


def file_dependency_pairs(conn: Connection, project: str) -> list[tuple[str, str, int]]:
    """(from path, to path, number of fresh dependency edges) between different files."""
    return [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT fa.path, fb.path, COUNT(*) FROM code_edges e JOIN code_files fa ON fa.id = e.owner_file "
        "JOIN code_nodes b ON b.id = e.dst JOIN code_files fb ON fb.id = b.file_id "
        f"WHERE fa.project = ? AND e.kind IN {_DEP_SQL} AND e.stale_at IS NULL AND fa.id != fb.id "
        "GROUP BY fa.path, fb.path", (project,))]


def files_with_edges_into(conn: Connection, file_id: int, qualnames: list[str]) -> set[int]:
    """Files (other than `file_id`) with an edge into these definitions of `file_id`."""
    out: set[int] = set()
    for chunk in _chunks(qualnames):
        out |= {r[0] for r in conn.execute(
            "SELECT DISTINCT e.owner_file FROM code_nodes n JOIN code_edges e ON e.dst = n.id "
            f"WHERE n.file_id = ? AND n.qualname IN ({_marks(len(chunk))}) AND e.owner_file != ?",
            [file_id, *chunk, file_id])}
    return out


def files_referencing(conn: Connection, project: str, names: list[str]) -> set[int]:
    """Files with an unresolved reference (call, import, base) whose dotted text has one of `names`
    as a segment."""
    out: set[int] = set()
    for name in names:
        out |= {r[0] for r in conn.execute(
            "SELECT DISTINCT e.owner_file FROM code_edges e JOIN code_files f ON f.id = e.owner_file "
            "WHERE f.project = ? AND e.dst IS NULL AND (e.external = ? OR e.external LIKE ? OR e.external LIKE ?"
            " OR e.external LIKE ?)", (project, name, f"%.{name}", f"{name}.%", f"%.{name}.%"))}
    return out
