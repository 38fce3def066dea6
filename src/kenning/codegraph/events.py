"""Keeping the graph fresh from agent activity: an Edit/Write tool event re-indexes that file;
a session start brings the project containing the session's directory up to date (stat
comparison: only files whose size/mtime and content hash changed are parsed again). Both run off
the hook's latency-bounded call (issue 34): edits go to one background thread (`EditReindexer`),
a session start's refresh to a thread of its own, which also finds the project (the hook's thread reads
no store for it)."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from kenning.codegraph.indexer import index_path, refresh_files
from kenning.codegraph.views import project_for_path
from kenning.core.events import EDIT_TOOLS
from kenning.core.telemetry import record_error
from kenning.store.backend import StoreDatabase


def edited_files(tool_name: object, tool_input: object) -> list[str]:
    if tool_name not in EDIT_TOOLS or not isinstance(tool_input, dict):
        return []
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    return [path] if isinstance(path, str) and path.strip() else []


def reindex_file(db: StoreDatabase, path: str) -> dict[str, object] | None:
    """Re-index `path` when it is indexed code (its refresh report), else None."""
    found = project_for_path(db.reader(), path)
    if found is None:
        return None
    return refresh_files(db, found[0], [path]).to_dict()


class EditReindexer:
    """The post-tool-use hook's door to the code graph: `submit` queues the file an Edit/Write touched
    and returns at once; one background thread re-indexes queued files in order (a file already
    waiting is not queued twice). Until it has, that file's edges are the previous version's."""

    def __init__(self, db: StoreDatabase) -> None:
        self.db = db
        self._queue: queue.Queue[str] = queue.Queue()
        self._waiting: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, tool_name: str, tool_input: dict[str, object], cwd: str | None) -> bool:
        """Queue the file a tool edited (True), or nothing when the tool edits none (False)."""
        files = edited_files(tool_name, tool_input)
        if not files:
            return False
        path = files[0] if Path(files[0]).is_absolute() or not cwd else str(Path(cwd) / files[0])
        with self._lock:
            if path not in self._waiting:
                self._waiting.add(path)
                self._queue.put(path)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="codegraph-edits", daemon=True)
                self._thread.start()
        return True

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            with self._lock:
                self._waiting.discard(path)
            try:
                reindex_file(self.db, path)
            except Exception as exc:  # background thread boundary: log and count, never kill the daemon
                record_error("codegraph", f"re-index of edited {path} failed: {exc}", kind=type(exc).__name__)


_running: set[str] = set()  # projects whose session-start refresh is running
_running_lock = threading.Lock()
REFRESH_THREAD = "codegraph-refresh"  # the name of a session start's refresh thread


def refresh_in_background(db: StoreDatabase, cwd: str | None) -> bool:
    """Session start: re-index what changed in the project around `cwd` on a background thread,
    so the hook answers at once (until it finishes, changed files' edges are stale and skipped).
    The caller's thread touches no store: which indexed project holds `cwd`, and whether its refresh
    is already running, is read on that thread (`_refresh`). True: queued; False: no directory."""
    if not isinstance(cwd, str) or not cwd:
        return False
    threading.Thread(target=_refresh, args=(db, cwd), name=REFRESH_THREAD, daemon=True).start()
    return True


def _refresh(db: StoreDatabase, cwd: str) -> None:
    """The refresh thread: the indexed project holding `cwd` (nothing when none), brought up to date
    unless a refresh of it is already running."""
    try:
        found = project_for_path(db.reader(), cwd)
    except Exception as exc:  # background thread boundary: log and count, never kill the daemon
        record_error("codegraph", f"session-start refresh lookup for {cwd} failed: {exc}", kind=type(exc).__name__)
        return
    if found is None:
        return
    project, root = found
    with _running_lock:
        if project in _running:
            return
        _running.add(project)
    try:
        index_path(db, root, project)
    except Exception as exc:  # background thread boundary: log and count, never kill the daemon
        record_error("codegraph", f"session-start refresh of {project} failed: {exc}", kind=type(exc).__name__)
    finally:
        with _running_lock:
            _running.discard(project)
