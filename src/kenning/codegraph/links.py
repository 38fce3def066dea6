"""Memories attached to code (memory-system-v4 section 6, layer 3 → layer 1).

A memory is linked to an indexed file when its `related_files` or its text names the file
(`retryx/retry.py`, or a unique path suffix such as `retry.py`), and to a definition when
its text names one unambiguously (`Retrier.run`, `` `bucket` ``, `apply_discounts()`).
Links are stored by path and qualname, so they survive re-indexing. New memories are linked
in their own write transaction (an in-tx hook: indexed lookups only, no model, no network);
`link_project` links what was stored before the project was indexed.

Issue 31: a rule that names indexed code is an area rule about that code: its area becomes the named
symbol (else the file) and the linked files join its `related_files`, so the step that reads or edits
one of them shows it. When the code index sees such a file deleted or the symbol gone (`mark_left_behind`,
after each index or refresh), the rule is marked stale with the repository's HEAD commit as evidence.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Iterable

from kenning.codegraph.views import project_for_path
from kenning.core.claims import RULE_TYPES
from kenning.core.clock import now_iso
from kenning.core.telemetry import record_error
from kenning.core.types import MemoryDraft
from kenning.store import codegraph as store
from kenning.store import rule_scope
from kenning.store.backend import Connection, StoreDatabase

_EXT = r"(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|mts|cts|go|rs)"
PATH_TOKEN = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.{_EXT})(?![\w/])")
SYMBOL_TOKEN = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\(\))?`|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")
MIN_SYMBOL_CHARS = 4
MAX_TOKENS = 40


def mentions(conn: Connection, project: str, text: str, related_files: Iterable[str] = ()) -> set[tuple[str, str, str]]:
    """(path, symbol or '', reason) for each indexed file / definition the memory names."""
    found: set[tuple[str, str, str]] = set()
    for raw in related_files:
        token = str(raw).strip().removeprefix("./")
        for path in _paths(conn, project, token):
            found.add((path, "", "related_files"))
    for token in list(dict.fromkeys(PATH_TOKEN.findall(text or "")))[:MAX_TOKENS]:
        for path in _paths(conn, project, token.removeprefix("./")):
            found.add((path, "", "text_path"))
    symbols = [a or b for a, b in SYMBOL_TOKEN.findall(text or "")]
    for token in list(dict.fromkeys(symbols))[:MAX_TOKENS]:
        if "." not in token and len(token) < MIN_SYMBOL_CHARS:
            continue
        matches = store.symbols_matching(conn, project, token)
        if 1 <= len(matches) <= 2:  # more is too ambiguous to attach a memory to
            found |= {(path, qualname, "text_symbol") for path, qualname in matches}
    return found


def _paths(conn: Connection, project: str, token: str) -> list[str]:
    if not token or "\n" in token:
        return []
    if token.startswith("/"):
        info = store.get_project(conn, project)
        root = (info["root"] if info else "").rstrip("/") + "/"
        if not token.startswith(root):
            return []
        token = token[len(root):]
    matches = store.paths_matching(conn, project, token)
    return matches if len(matches) <= 3 else []


def link_in_tx(conn: Connection, memory_id: str, draft: MemoryDraft) -> None:
    """An in-transaction hook of the write path (memory.write.WritePath): link a new memory to the code it names."""
    projects = store.indexed_projects(conn)
    if not projects:
        return
    if draft.project is not None:
        projects = [p for p in projects if p == draft.project]
    now = now_iso()
    found: list[tuple[str, str, str]] = []
    for project in projects:
        for path, symbol, reason in sorted(mentions(conn, project, draft.content, draft.related_files)):
            store.link_memory(conn, memory_id, project, path, symbol, reason, now)
            found.append((path, symbol, reason))
    if found and draft.type in RULE_TYPES and draft.applies != "project":
        area, files = code_area(draft.content, draft.related_files, found)
        rule_scope.set_code_area(conn, memory_id, area, files)


def code_area(content: str, related_files: list[str], found: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    """The area of a rule that names indexed code (the symbol it names first in its text, else the file)
    and its related files with the linked ones added."""
    content = content or ""
    symbols = [(content.find(symbol.rsplit(".", 1)[-1]), symbol) for _, symbol, _ in found if symbol]
    named = [symbol for at, symbol in sorted(symbols) if at >= 0]
    files = list(dict.fromkeys([*related_files, *(path for path, _, _ in found)]))
    return (named[0] if named else found[0][0]), files


def _head_commit(root: Path) -> str | None:
    """The repository's HEAD commit at `root` (the evidence of a stale rule), or None outside git."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, timeout=10,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("ascii", errors="replace").strip() or None


def mark_left_behind(db: StoreDatabase, project: str, root: Path, paths: list[str]) -> list[str]:
    """Mark stale the area rules linked to code in `paths` (changed or removed files) whose file or
    symbol the index no longer has; returns their ids. Evidence: {commit, path, symbol, reason}."""
    if not paths:
        return []
    conn = db.reader()
    gone: dict[str, dict[str, object]] = {}
    for link in rule_scope.linked_area_rules(conn, project, paths):
        if link["memory_id"] in gone or rule_scope.code_exists(conn, project, link["path"], link["symbol"]):
            continue
        if not link["symbol"]:
            reason = "deleted or renamed"
        elif rule_scope.code_exists(conn, project, link["path"], ""):
            moved = rule_scope.symbol_elsewhere(conn, project, link["symbol"], link["path"])
            reason = f"moved to {moved}" if moved else "removed or renamed"
        else:
            reason = "deleted with its file"
        gone[link["memory_id"]] = {"path": link["path"], "symbol": link["symbol"] or None, "reason": reason}
    if not gone:
        return []
    commit = _head_commit(root)
    at = now_iso()
    try:
        with db.with_write_tx() as wconn:
            for memory_id, stale in gone.items():
                rule_scope.mark_stale(wconn, memory_id, at=at, stale={"commit": commit, **stale, "at": at},
                                      actor="code-index")
    except Exception as exc:  # the index is written; a rule not marked now is checked on the next change
        record_error("codegraph", f"marking rules stale failed: {exc}", project=project)
        return []
    return list(gone)


def link_project(db: StoreDatabase, project: str) -> int:
    """Link the memories of `project` (and project-less ones) stored before it was indexed."""
    conn = db.reader()
    pending = []
    for memory_id, content, related in store.memories_for_linking(conn, project):
        pending += [(memory_id, *m) for m in mentions(conn, project, content, related)]
    if pending:
        now = now_iso()
        found: dict[str, list[tuple[str, str, str]]] = {}
        for memory_id, path, symbol, reason in pending:
            found.setdefault(memory_id, []).append((path, symbol, reason))
        rules = rule_scope.rules_to_scope(conn, list(found))  # rules stored before the index: their code area
        with db.with_write_tx() as wconn:
            for memory_id, path, symbol, reason in pending:
                store.link_memory(wconn, memory_id, project, path, symbol, reason, now)
            for rule in rules:
                area, files = code_area(rule.content, rule.related_files, sorted(found[rule.id]))
                rule_scope.scope_to_code(wconn, rule.id, area, files, actor="code-index")
    return len(pending)


def neighbourhood_memories(conn: Connection, files: list[str], *, project: str | None = None, depth: int = 1,
                           limit: int = 20) -> dict:
    """Memories attached to these files or to their neighbourhood (dependents within `depth`
    hops, direct dependencies) — for session start and step injection."""
    if project is None:
        found = project_for_path(conn, files[0]) if files else None
        if found is None:
            return {"project": None, "files": {}, "memories": []}
        project = found[0]
    info = store.get_project(conn, project)
    root = (info["root"] if info else "").rstrip("/") + "/"
    rel = [f[len(root):] if f.startswith(root) else f.removeprefix("./") for f in files]
    around = store.neighbour_paths(conn, project, rel, depth)
    rows = store.memories_linked(conn, project, list(around), limit * 3)
    best: dict[str, dict] = {}
    for r in rows:
        hops = around.get(r["path"], depth + 1)
        item = {"id": r["memory_id"], "type": r["type"], "content": r["content"][:300],
                "linked_to": f"{r['path']}:{r['symbol']}" if r["symbol"] else r["path"], "distance": hops}
        if r["memory_id"] not in best or hops < best[r["memory_id"]]["distance"]:
            best[r["memory_id"]] = item
    ranked = sorted(best.values(), key=lambda m: m["distance"])[:limit]
    return {"project": project, "files": around, "memories": ranked}
