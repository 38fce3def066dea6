"""Keeping the graph fresh from agent activity: an Edit/Write tool event re-indexes that file;
a session start brings the project containing the session's directory up to date (stat
comparison: only files whose size/mtime and content hash changed are parsed again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kenning.codegraph.indexer import index_path, refresh_files
from kenning.codegraph.views import project_for_path

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


def edited_files(tool_name: Any, tool_input: Any) -> list[str]:
    if tool_name not in EDIT_TOOLS or not isinstance(tool_input, dict):
        return []
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    return [path] if isinstance(path, str) and path.strip() else []


def on_tool_use(db, tool_name: Any, tool_input: Any, cwd: str | None = None) -> dict | None:
    """The post-tool-use hook's call: re-index the file an Edit/Write touched, if it is indexed code."""
    files = edited_files(tool_name, tool_input)
    if not files:
        return None
    path = files[0] if Path(files[0]).is_absolute() or not cwd else str(Path(cwd) / files[0])
    found = project_for_path(db.reader(), path)
    if found is None:
        return None
    return refresh_files(db, found[0], [path]).to_dict()


def on_session_start(db, cwd: str | None) -> dict | None:
    """Bring the indexed project around `cwd` up to date (changed files only)."""
    if not cwd:
        return None
    found = project_for_path(db.reader(), cwd)
    if found is None:
        return None
    return index_path(db, found[1], found[0]).to_dict()
