"""A PreCompact checkpoint reads the transcript's whole entries (issue 33, item 8).

On a real Claude Code transcript longer than 64 KB (../shared/harness/claude-code/transcript-sample.jsonl,
written by claude 2.1.328), the hook cut the last 64 K characters: the slice started mid-entry, the
transcript reader took it for plain text, and the checkpoint stored Claude Code's own JSON and
system text (a tool description) instead of the conversation. A real `kenning hook pre-compact`
against a real daemon now stores the user's prompt and the assistant's answer, nothing else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

KENNING = str(Path(sys.executable).with_name("kenning"))
SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "harness" / "claude-code" / "transcript-sample.jsonl"


def _hook(event: str, body: dict, env: dict[str, str]) -> None:
    done = subprocess.run([KENNING, "hook", event], input=json.dumps(body).encode(), capture_output=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(not SAMPLE.exists(), reason="the harness samples ../shared/harness/claude-code are not here")
def test_a_precompact_checkpoint_keeps_the_conversation_of_a_real_transcript(daemon, tmp_path):
    transcript = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, transcript)
    assert transcript.stat().st_size > 64 * 1024  # longer than the slice the hook used to cut
    env = {**os.environ, **daemon.env, "KENNING_TRANSCRIPT_ROOTS": str(tmp_path)}
    key = str(uuid.uuid4())
    common = {"session_id": key, "transcript_path": str(transcript), "cwd": str(tmp_path), "permission_mode": "default"}
    _hook("session-start", {**common, "hook_event_name": "SessionStart", "source": "startup"}, env)
    _hook("pre-compact", {**common, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}, env)
    with daemon.client() as http:
        checkpoints = http.get(f"/api/sessions/{key}").json()["checkpoints"]
    assert [c["trigger"] for c in checkpoints] == ["auto"]
    content = checkpoints[0]["content"]
    assert "Why does the script crash?" in content and "Done." in content  # the user's prompt, the answer
    leaked = [m for m in ('"parentUuid"', '"type":', "sessionId", "cache miss", "<system-reminder>") if m in content]
    assert leaked == [], content[:2000]
