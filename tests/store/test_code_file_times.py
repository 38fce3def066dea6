"""A code file's real modification time (nanoseconds since 1970) is stored and read back on both
backends: PostgreSQL's INTEGER is 32-bit, and indexing any real file failed there (m056)."""

from __future__ import annotations

import os
from pathlib import Path

from kenning.core.clock import now_iso
from kenning.store import codegraph


def test_a_real_file_time_round_trips(db, tmp_path: Path) -> None:
    source = tmp_path / "ledger.py"
    source.write_text("def post_entry():\n    return 1\n")
    mtime_ns = os.stat(source).st_mtime_ns
    assert mtime_ns > 2**31  # what overflowed PostgreSQL's INTEGER
    with db.with_write_tx() as conn:
        codegraph.upsert_project(conn, "p", str(tmp_path), None, now_iso())
        codegraph.upsert_file(conn, "p", {
            "path": "ledger.py", "language": "python", "module": "ledger", "content_hash": "h1",
            "size": source.stat().st_size, "mtime_ns": mtime_ns, "is_test": False,
            "error_line": None, "facts": {}}, now_iso())
    states = codegraph.file_states(db.reader(), "p")
    assert states["ledger.py"]["mtime_ns"] == mtime_ns
