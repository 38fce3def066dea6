"""The daemon reads a transcript path only through the confined reader (issue 26): a spooled
session end, or a stale session, naming /etc/passwd or a FIFO stores no transcript from it."""

from __future__ import annotations

import os
import time
import uuid

import httpx

from kenning.core import spool
from kenning.hooks.spool import spool_request
from bench.harnesses.daemon import start_daemon

CONFIG = "sessions:\n  latency_budget_ms: 20000\n  stale_after_minutes: 0\n"


def test_spooled_and_stale_sessions_never_read_outside_the_harness_folders(tmp_path):
    user = tmp_path / "user"
    (user / ".claude" / "projects").mkdir(parents=True)
    home = tmp_path / "kenning"
    fifo = user / ".claude" / "projects" / "fifo.jsonl"
    os.mkfifo(fifo)
    spooled, stale_passwd, stale_fifo, control = (str(uuid.uuid4()) for _ in range(4))
    good = user / ".claude" / "projects" / "good.jsonl"
    good.write_text('{"type":"user","message":{"role":"user","content":"We always tag releases."}}\n')
    env = {"KENNING_HOME": str(home)}
    spool_request("/api/hooks/session-end", {"session_key": spooled, "reason": "other"},
                  transcript_path="/etc/passwd", harness="claude-code", environ=env)
    daemon = start_daemon(home, CONFIG, {"HOME": str(user)})
    try:
        with daemon.client() as http:
            for key, path in ((stale_passwd, "/etc/passwd"), (stale_fifo, str(fifo))):
                assert http.post("/api/hooks/session-start", json={
                    "session_key": key, "transcript_path": path}).status_code == 200
            end = time.monotonic() + 60
            while time.monotonic() < end and spool.stats(str(home))["depth"]:
                time.sleep(0.5)
            assert spool.stats(str(home))["depth"] == 0
            assert http.post("/api/hooks/session-start", json={  # the control: a readable transcript
                "session_key": control, "transcript_path": str(good)}).status_code == 200
        daemon.stop()
        daemon = start_daemon(home, CONFIG, {"HOME": str(user)})  # the stale check runs at start
        with daemon.client() as http:
            end = time.monotonic() + 60
            while time.monotonic() < end and http.get(f"/api/sessions/{control}").json()["transcript"] is None:
                time.sleep(0.5)
            assert http.get(f"/api/sessions/{control}").json()["session"]["status"] == "ended"  # the check ran
            replayed = http.get(f"/api/sessions/{spooled}").json()
            assert replayed["session"]["status"] == "ended" and replayed["transcript"] is None
            for key in (stale_passwd, stale_fifo):
                detail = http.get(f"/api/sessions/{key}").json()
                assert detail["session"]["status"] == "active" and detail["transcript"] is None
            dump = httpx.get(f"{daemon.base_url}/api/export", params={"format": "json"}, timeout=60).text
            assert "root:x:0:0" not in dump
    finally:
        daemon.stop()
