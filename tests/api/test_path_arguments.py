"""Path arguments are checked before any file-system call (issue 33, item 6): a path the file system
cannot take — a component over 255 bytes, or 4096 bytes in all — answers 400 with a message naming
ENAMETOOLONG on every route that takes a path, on a real daemon. Before, POST /api/ingest/git
answered 500 (the OSError of `Path.is_dir`)."""

from __future__ import annotations

import pytest

LONG_NAME = "/tmp/" + "n" * 300 + "/repo"  # one component over NAME_MAX
LONG_PATH = "/" + "/".join(["é" * 100] * 21)  # 2,121 characters, 4,221 bytes: over PATH_MAX


def _routes(path: str) -> list[tuple[str, str, dict]]:
    return [
        ("POST", "/api/ingest/git", {"json": {"path": path, "wait": True}}),
        ("POST", "/api/ingest/git", {"json": {"path": path}}),
        ("POST", "/api/code/index", {"json": {"path": path, "project": "too-long"}}),
        ("POST", "/api/code/refresh", {"json": {"files": [path]}}),
        ("GET", "/api/code/memories", {"params": {"files": [path]}}),
        ("GET", "/api/code/impact", {"params": {"target": "app.py", "cwd": path}}),
    ]


@pytest.mark.parametrize("path", [LONG_NAME, LONG_PATH], ids=["long-component", "long-path"])
def test_a_path_the_file_system_cannot_take_is_a_400_with_a_message(daemon, path):
    with daemon.client(timeout=120) as http:
        answers = [(route, http.request(method, route, **kw)) for method, route, kw in _routes(path)]
    wrong = [(route, r.status_code, r.text[:200]) for route, r in answers
             if r.status_code != 400 or "ENAMETOOLONG" not in r.json().get("error", "")]
    assert wrong == []
