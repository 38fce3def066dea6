"""`opencode run "How do we …?"` hands the plugin the message wrapped in double quotes (OpenCode 1.18.33:
shared/harness/opencode's captured chat.message part is `"\\"Run echo hi\\""`); the prompt kenning stores
is the user's words without them (issue 35). A prompt with quotes inside keeps them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid


def test_the_stored_prompt_has_no_wrapping_quotes(daemon):
    env = {**os.environ, **daemon.env}
    prompts = {'"How do we apply infrastructure changes?"': "How do we apply infrastructure changes?",
               'Rename "foo" to "bar"': 'Rename "foo" to "bar"'}
    for sent, stored in prompts.items():
        key = f"ses_{uuid.uuid4().hex[:12]}"
        for event, payload in (("session.created", {"session_id": key, "cwd": "/tmp/infra"}),
                               ("chat.message", {"session_id": key, "cwd": "/tmp/infra", "prompt": sent})):
            done = subprocess.run([sys.executable, "-c", "import sys; from kenning.cli.entry import main; "
                                   "sys.argv[0] = 'kenning'; main()", "hook", "opencode", event],
                                  input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        session = daemon.get(f"/api/sessions/{key}").json()
        assert [p["prompt"] for p in session["prompts"]] == [stored]
