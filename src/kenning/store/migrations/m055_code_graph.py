"""Code knowledge graph (SPEC S8, memory-system-v4 section 6, layer 1).

- `code_projects`: an indexed repository root per project name.
- `code_files`: one row per source file, its content hash (incremental indexing), module key,
  the extracted facts as JSON (re-resolution without re-parsing) and `stale_at` while its
  edges are being rebuilt.
- `code_nodes`: the file node (qualname '') and its definitions, stable ids per qualname.
- `code_edges`: imports / imports_symbol / defines / calls / calls_external / extends /
  implements / tested_by; `owner_file` is the file whose facts produced the edge; `stale_at`
  set while that file is re-indexed (queries read only `stale_at IS NULL`).
- `code_closure`: depth-bounded reverse-dependency closure: `node` depends on `anchor` through
  `depth` hops, the last hop from `node` to `via` (path reconstruction), maintained incrementally.
- `code_memory_links`: a memory attached to a file (symbol '') or a symbol, by path so links
  survive re-indexing.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE code_projects (
    project TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    go_module TEXT,
    indexed_at TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE code_files (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL REFERENCES code_projects(project) ON DELETE CASCADE,
    path TEXT NOT NULL,
    language TEXT NOT NULL,
    module TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    is_test INTEGER NOT NULL DEFAULT 0,
    error_line INTEGER,
    facts TEXT NOT NULL,
    stale_at TEXT,
    indexed_at TEXT NOT NULL,
    UNIQUE (project, path)
);
CREATE INDEX idx_code_files_module ON code_files(project, module);

CREATE TABLE code_nodes (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES code_files(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    start_line INTEGER,
    end_line INTEGER,
    UNIQUE (file_id, qualname)
);
CREATE INDEX idx_code_nodes_name ON code_nodes(name);

CREATE TABLE code_edges (
    id INTEGER PRIMARY KEY,
    owner_file INTEGER NOT NULL REFERENCES code_files(id) ON DELETE CASCADE,
    src INTEGER NOT NULL REFERENCES code_nodes(id) ON DELETE CASCADE,
    dst INTEGER REFERENCES code_nodes(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    external TEXT,
    line INTEGER,
    stale_at TEXT
);
CREATE INDEX idx_code_edges_owner ON code_edges(owner_file);
CREATE INDEX idx_code_edges_dst ON code_edges(dst, kind);
CREATE INDEX idx_code_edges_src ON code_edges(src, kind);

CREATE TABLE code_closure (
    anchor INTEGER NOT NULL,
    node INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    via INTEGER NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (anchor, node)
) WITHOUT ROWID;
CREATE INDEX idx_code_closure_node ON code_closure(node, depth);

CREATE TABLE code_memory_links (
    memory_id TEXT NOT NULL,
    project TEXT NOT NULL,
    path TEXT NOT NULL,
    symbol TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, project, path, symbol)
);
CREATE INDEX idx_code_memory_links_path ON code_memory_links(project, path);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
