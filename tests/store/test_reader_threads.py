"""Reader connections end with their thread (issue 33, item 7).

A daemon runs short-lived threads — every idle check starts a spool-replay thread, a request pool's
workers come and go — and each one's first read opened a reader connection (the database file, its
-wal and -shm) that stayed open until the daemon stopped: an idle daemon's open files grew by one
or two a minute (29 → 53 in 30 s with `sessions.idle_check_s: 5`). Counted in /proc/<pid>/fd."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from kenning.store.db import open_database

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/<pid>/fd")


def db_files_open(pid: int | str, db: Path) -> int:
    """How many of the process's open files are the database's (memories.db, -wal, -shm)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(fd).startswith(str(db)):
                count += 1
        except OSError:
            pass  # closed meanwhile
    return count


def test_many_short_lived_reader_threads_leave_no_connection_open(tmp_path):
    db_path = tmp_path / "memories.db"
    db = open_database(db_path)
    try:
        db.reader().execute("SELECT 1").fetchone()
        before = db_files_open("self", db_path)
        for _ in range(40):
            thread = threading.Thread(target=lambda: db.reader().execute("SELECT count(*) FROM memories").fetchone())
            thread.start()
            thread.join()
        after = db_files_open("self", db_path)
        assert after - before <= 3, (before, after)  # the last thread's reader at most (file, -wal, -shm)
    finally:
        db.close()


def test_an_idle_daemon_keeps_its_open_files_flat(daemon_factory):
    """Idle checks every 0.2 s (the issue's ten idle minutes, compressed by config): each runs in a
    new thread that reads the store. The daemon's open database files stay where they were."""
    daemon = daemon_factory("sessions:\n  idle_check_s: 0.2\n")
    db = daemon.home / "memories.db"
    time.sleep(3)  # start-up's own threads have come and gone
    before = db_files_open(daemon.proc.pid, db)
    time.sleep(12)  # ~60 idle checks, each in its own thread
    after = db_files_open(daemon.proc.pid, db)
    assert daemon.get("/api/health").status_code == 200
    assert after - before <= 3, (before, after)
