"""One account of what a session wrote (issue 35): after a session ends with a transcript, `kenning review
-s learned` lists its episodes under the session with "wrote N episodes", `kenning sessions show` says the
same, and GET /api/review/sessions counts them by kind — where each said "learned nothing" / "taught
nothing" before, while the episodes were injected into the next sessions."""

from __future__ import annotations

import json
import re
import uuid

from tests.cli.test_cli_tables import cli


def test_review_learned_and_sessions_show_count_the_episodes(daemon):
    key = f"wrote-{uuid.uuid4().hex[:8]}"
    project = f"wrote-{uuid.uuid4().hex[:6]}"
    transcript = ("user: how do we rotate the signing key?\n"
                  "assistant: run scripts/rotate-key.sh, then restart the api pods one by one\n"
                  "user: and the old key?\n"
                  "assistant: it stays valid for 24 hours so tokens already issued keep working")
    with daemon.client() as http:
        http.post("/api/hooks/session-start", json={"session_key": key, "project": project,
                                                   "harness": "claude-code"}).raise_for_status()
        http.post("/api/hooks/user-prompt-submit", json={"session_key": key,
                                                        "prompt": "how do we rotate the signing key?"}).raise_for_status()
        http.post("/api/hooks/session-end", json={"session_key": key, "transcript": transcript,
                                                 "wait": True}).raise_for_status()
        about = http.get("/api/review/sessions", params={"keys": key}).json()["sessions"][key]
    episodes = about["wrote"].get("episode", 0)
    assert episodes >= 1, about

    learned = cli(daemon, "review", "-s", "learned", "--session", key, columns=200).stdout
    assert f"wrote {episodes} episode" in learned and "learned nothing" not in learned, learned
    assert re.search(r"\] episode · ", learned), learned
    items = json.loads(cli(daemon, "review", "-s", "learned", "--session", key, "--json").stdout)
    assert {m["kind"] for g in items["sessions"] for m in g["memories"]} >= {"episode"}

    shown = cli(daemon, "sessions", "show", key, columns=200).stdout
    assert f"this session wrote {episodes} episode" in shown, shown
    assert "shown" in shown and "inj" not in shown.split()  # words, not abbreviations
