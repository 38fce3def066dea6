"""Index a repository into the code graph, incrementally by content hash.

Order of work, so that a query never mixes stale and fresh edges of one node:
1. list files; a file whose size+mtime or content hash changed is *changed*;
2. one short transaction marks the changed and removed files' edges stale (queries skip them);
3. parse changed files outside any transaction (tree-sitter; a syntax error indexes the rest);
4. write transactions of WRITE_BATCH files swap in nodes (ids stable per qualname), then
   re-resolve the edges of the changed files and of the files they can affect (each file's edges
   swap in one transaction, clearing its staleness), then the closure is updated for the anchors
   those edges can reach (in batches when rebuilt whole). Short transactions keep the daemon's
   own writes from waiting behind a large index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, cast

from kenning.codegraph import closure
from kenning.codegraph.facts import FileFacts, FileFactsJson
from kenning.codegraph.files import MAX_FILE_BYTES, is_skipped_path, list_source_files, looks_generated
from kenning.codegraph.languages import language_of
from kenning.codegraph.layout import Layout, ParsedFile, content_hash
from kenning.codegraph.links import link_project, mark_left_behind
from kenning.codegraph.resolve import Edge, FileEntry, FileResolver, ProjectIndex
from kenning.core.clock import now_iso
from kenning.core.errors import InvalidInput
from kenning.store import codegraph as store
from kenning.store.backend import Connection, StoreDatabase

Progress = Callable[[str, int, int], None]   # (phase, done, total)
WRITE_BATCH = 200        # files per write transaction
CLOSURE_BATCH = 20_000   # closure rows per write transaction


@dataclass
class IndexReport:
    project: str
    root: str
    files: int = 0
    parsed: int = 0
    unchanged: int = 0
    removed: int = 0
    resolved: int = 0
    syntax_errors: list[str] = field(default_factory=list)
    closure: str = "none"
    anchors: int = 0
    memory_links: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _quiet(phase: str, done: int, total: int) -> None:
    return None


def index_path(db: StoreDatabase, root: Path | str, project: str, *, progress: Progress = _quiet,
               max_bytes: int = MAX_FILE_BYTES) -> IndexReport:
    """Index (or bring up to date) every source file under `root` as `project`."""
    started = time.perf_counter()
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise InvalidInput(f"not a directory: {root}")
    paths = list_source_files(root, max_bytes)
    report = IndexReport(project, str(root), files=len(paths))
    known = store.file_states(db.reader(), project)
    changed, touched = [], []
    for i, rel in enumerate(paths):
        progress("scan", i + 1, len(paths))
        state = known.get(rel)
        stat = (root / rel).stat()
        if state and state["size"] == stat.st_size and state["mtime_ns"] == stat.st_mtime_ns and not state["stale_at"]:
            continue
        data = (root / rel).read_bytes()
        if state and state["content_hash"] == content_hash(data) and not state["stale_at"]:
            touched.append((state["id"], stat.st_size, stat.st_mtime_ns))
            continue
        changed.append((rel, data, stat.st_size, stat.st_mtime_ns))
    gone = sorted(set(known) - set(paths))
    removed = [known[p]["id"] for p in gone]
    report.unchanged = len(paths) - len(changed)
    report.removed = len(removed)
    _apply(db, root, project, changed, removed, touched, report, progress, Layout.scan(root, paths))
    if changed or removed:
        report.memory_links = link_project(db, project)
        mark_left_behind(db, project, root, [c[0] for c in changed] + gone)  # rules whose code is gone (issue 31)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def refresh_files(db: StoreDatabase, project: str, paths: list[str], *, progress: Progress = _quiet) -> IndexReport:
    """Re-index a few files of an indexed project (an Edit/Write tool event); paths relative to its root
    or absolute inside it. Files that vanished are removed; unchanged files cost a stat."""
    info = store.get_project(db.reader(), project)
    if info is None:
        raise InvalidInput(f"project {project!r} has no code index; run `kenning code index` first")
    root = Path(info["root"])
    started = time.perf_counter()
    known = store.file_states(db.reader(), project)
    report = IndexReport(project, str(root))
    changed, removed, gone = [], [], []
    for raw in paths:
        rel = _relative(root, raw)
        if rel is None or language_of(rel) is None or is_skipped_path(rel):
            continue
        full = root / rel
        if not full.is_file():
            if rel in known:
                removed.append(known[rel]["id"])
                gone.append(rel)
            continue
        data = full.read_bytes()
        state = known.get(rel)
        if len(data) > MAX_FILE_BYTES or (state and state["content_hash"] == content_hash(data)
                                         and not state["stale_at"]):
            continue
        stat = full.stat()
        changed.append((rel, data, stat.st_size, stat.st_mtime_ns))
    report.files, report.removed = len(changed), len(removed)
    if changed or removed:
        layout = Layout.scan(root, list(known) + [c[0] for c in changed])
        _apply(db, root, project, changed, removed, [], report, progress, layout)
        mark_left_behind(db, project, root, [c[0] for c in changed] + gone)  # rules whose code is gone (issue 31)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _relative(root: Path, raw: str) -> str | None:
    path = Path(raw)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(root).as_posix()
        except ValueError:
            return None
    return path.as_posix()


def _apply(db: StoreDatabase, root: Path, project: str, changed: list[tuple], removed: list[int], touched: list[tuple],
           report: IndexReport, progress: Progress, layout: Layout) -> None:
    known = store.file_states(db.reader(), project)
    stale_ids = [known[rel]["id"] for rel, *_ in changed if rel in known] + removed
    if stale_ids:
        with db.with_write_tx() as conn:
            store.mark_stale(conn, stale_ids, now_iso())
    parsed: list[tuple[ParsedFile, int, int]] = []
    for i, (rel, data, size, mtime) in enumerate(changed):
        progress("parse", i + 1, len(changed))
        if looks_generated(data[:600]):
            continue
        item = layout.parse(rel, data)
        if item.facts.error_line is not None:
            report.syntax_errors.append(f"{rel}:{item.facts.error_line}")
        parsed.append((item, size, mtime))
    report.parsed = len(parsed)
    _write(db, root, project, parsed, removed, touched, report, progress, layout, bool(known))


def _batches(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _write(db: StoreDatabase, root: Path, project: str, parsed: list[tuple[ParsedFile, int, int]], removed: list[int],
           touched: list[tuple], report: IndexReport, progress: Progress, layout: Layout,
           had_closure: bool) -> None:
    """Nodes, then edges, then the closure, each in write transactions of WRITE_BATCH files, so
    other writers (the daemon) never wait long. Each file's edges swap in one transaction."""
    now = now_iso()
    with db.with_write_tx() as conn:
        store.upsert_project(conn, project, str(root), layout.go_module, now)
        store.touch_files(conn, touched)
    facts_cache: dict[int, FileFacts] = {}
    changed_ids, removed_nodes = [], []
    dependents: set[int] = set()
    old_dep_edges: set[tuple[int, int, str]] = set()
    known = store.file_states(db.reader(), project)
    for batch in _batches(parsed, WRITE_BATCH):
        with db.with_write_tx() as conn:
            for item, size, mtime in batch:
                state = known.get(item.path)
                if state:  # before its nodes go: the old version's edges and the files it affects
                    old_dep_edges |= store.dependency_edges_owned(conn, [state["id"]])
                dependents |= _affected_by(conn, project, state["id"] if state else None, item)
                file_id = store.upsert_file(conn, project, {
                    "path": item.path, "language": item.language, "module": item.module,
                    "content_hash": item.content_hash, "size": size, "mtime_ns": mtime, "is_test": item.is_test,
                    "error_line": item.facts.error_line, "facts": item.facts.to_json()}, now)
                nodes = {"": ("file", item.module, "", 1, None)}
                for d in item.facts.defs:  # a name defined twice (if/else, property setter): the first one
                    nodes.setdefault(d.qualname, (d.kind, d.name, d.qualname, d.start, d.end))
                _, gone = store.replace_nodes(conn, file_id, list(nodes.values()))
                removed_nodes += gone
                facts_cache[file_id] = item.facts
                changed_ids.append(file_id)
    with db.with_write_tx() as conn:
        dependents |= store.files_depending_on(conn, project, removed, [])
        old_dep_edges |= store.dependency_edges_owned(conn, sorted((dependents - set(changed_ids)) | set(removed)))
        removed_nodes += store.delete_files(conn, removed)
    index = _load_index(db.reader(), project, facts_cache)
    to_resolve = sorted((set(changed_ids) | dependents) & set(index.files))
    new_dep_edges: set[tuple[int, int, str]] = set()
    done = 0
    for batch in _batches(to_resolve, WRITE_BATCH):
        with db.with_write_tx() as conn:
            for file_id in batch:
                done += 1
                progress("resolve", done, len(to_resolve))
                facts = index.load_facts(file_id)
                if facts is None:  # (removed since the pass began)
                    continue
                edges = FileResolver(index, file_id, facts).edges() + _defines(index, file_id, facts)
                store.replace_edges(conn, file_id, [(e.src, e.dst, e.kind, e.external, e.line) for e in edges])
                new_dep_edges |= {(e.src, e.dst, e.kind) for e in edges
                                  if e.dst is not None and e.kind in store.DEPENDENCY_KINDS}
    report.resolved = len(to_resolve)
    _update_closure(db, project, old_dep_edges ^ new_dep_edges, removed_nodes, had_closure, report)
    with db.with_write_tx() as conn:
        store.set_indexed(conn, project, now)


def _affected_by(conn: Connection, project: str, file_id: int | None, item: ParsedFile) -> set[int]:
    """Other files whose edges a new version of this file can change (their facts are unchanged):
    - a new file: files whose import of its module did not resolve;
    - changed imports or default export (re-exports): every file resolving through this one;
    - definitions removed: files with edges into them; added: files with an unresolved
      reference naming them. A body-only edit affects no other file."""
    if file_id is None:
        return store.files_depending_on(conn, project, [], [item.module])
    data = store.load_facts(conn, file_id)
    old = FileFacts.from_json(cast(FileFactsJson, data)) if data else None  # what this indexer stored
    if old is None or _imports(old) != _imports(item.facts):
        return store.files_depending_on(conn, project, [file_id], [item.module])
    before, after = {d.qualname for d in old.defs}, {d.qualname for d in item.facts.defs}
    out: set[int] = set()
    if before - after:
        out |= store.files_with_edges_into(conn, file_id, sorted(before - after))
    added = {part for q in after - before for part in q.split(".")}
    if added:
        out |= store.files_referencing(conn, project, sorted(added))
    return out


def _imports(facts: FileFacts) -> tuple:
    return sorted((i.module, str(i.names), i.alias or "") for i in facts.imports), facts.default_export


def _load_index(conn: Connection, project: str, cache: dict[int, FileFacts]) -> ProjectIndex:
    files, nodes = store.index_rows(conn, project)
    symbols: dict[int, dict[str, int]] = {}
    for node_id, file_id, qualname in nodes:
        symbols.setdefault(file_id, {})[qualname] = node_id

    def load(file_id: int) -> FileFacts | None:
        if file_id not in cache:
            data = store.load_facts(conn, file_id)
            if data is None:
                return None
            cache[file_id] = FileFacts.from_json(cast(FileFactsJson, data))
        return cache[file_id]

    index = ProjectIndex(load_facts=load)
    for f in files:
        if "" in symbols.get(f["id"], {}):
            index.add_file(FileEntry(f["id"], f["path"], f["language"], f["module"], bool(f["is_test"])),
                           symbols[f["id"]])
    return index


def _defines(index: ProjectIndex, file_id: int, facts: FileFacts) -> list[Edge]:
    """file → top-level definitions, class → its members."""
    own = index.symbols[file_id]
    out = []
    for definition in facts.defs:
        node = own.get(definition.qualname)
        parent = own.get(definition.qualname.rpartition(".")[0], own[""])
        if node is not None and parent != node:
            out.append(Edge(parent, node, "defines", None, definition.start))
    return out


def _update_closure(db: StoreDatabase, project: str, changed: set[tuple[int, int, str]], removed_nodes: list[int],
                    had_closure: bool, report: IndexReport) -> None:
    if not changed and not removed_nodes:
        return
    anchors = closure.affected_anchors(
        changed, lambda nodes, depth: store.closure_anchors_reaching(db.reader(), nodes, depth))
    if not had_closure or len(anchors) > closure.FULL_REBUILD_ANCHORS:
        # Computed from committed fresh edges, written in batches: until the last batch lands,
        # impact answers for not-yet-written anchors are empty, never mixed.
        rows = closure.full_rows(store.dependency_adjacency(db.reader(), project))
        with db.with_write_tx() as conn:
            store.delete_project_closure(conn, project)
            store.delete_closure(conn, [], removed_nodes)
        for batch in _batches(rows, CLOSURE_BATCH):
            with db.with_write_tx() as conn:
                store.insert_closure(conn, batch)
        report.closure, report.anchors = "full", len({r[0] for r in rows})
        return
    with db.with_write_tx() as conn:
        store.delete_closure(conn, sorted(anchors | set(removed_nodes)), removed_nodes)

        def dependents(frontier: list[int]) -> closure.Adjacency:
            return closure.reverse_adjacency(store.dependents_of(conn, frontier))

        rows = []
        for anchor in sorted(anchors - set(removed_nodes)):
            rows += closure.bfs(anchor, dependents)
        store.insert_closure(conn, rows)
    report.closure, report.anchors = "incremental", len(anchors)
