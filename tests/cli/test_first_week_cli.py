"""The everyday commands with the daemon up load only what they need (issue 35): no kenning.core.config
(every settings section's pydantic model: the largest import of the old path), no import/export parsers,
no retrieval.config — the daemon is found the way the hooks find it (hooks.transport.daemon_endpoint) —
and --preset's written-out help names every preset retrieval.config has."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kenning.cli.memory import PRESET_HELP
from kenning.retrieval.config import PRESETS
from tests.cli.test_cli_local_fast import runner

SCRIPT = runner("sorted(m for m in sys.modules if m.startswith('kenning'))")
NOT_NEEDED = {"kenning.core.config", "kenning.memory.portable", "kenning.retrieval.config", "kenning.store",
              "kenning.service", "kenning.localstore"}


def run(daemon, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    env = {**os.environ, **daemon.env}
    env.pop("KENNING_URL", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(list(args))], env=env, capture_output=True,
                          text=True, timeout=300)
    body, _, loaded = done.stdout.rpartition("\nLOADED ")
    done.stdout = body
    return done, set(json.loads(loaded or "[]"))


def test_everyday_commands_with_the_daemon_up_load_only_what_they_need(daemon):
    stored, _ = run(daemon, "remember", "Deploys go through helm upgrade --atomic", "-p", "fast", "--json")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]
    for args in (["list", "-p", "fast"], ["show", memory_id], ["stats"], ["recall", "helm deploys", "-p", "fast"],
                 ["review"], ["remember", "Staging is eu-west-1", "-p", "fast"]):
        done, loaded = run(daemon, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert not {m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_NEEDED)}, (args, loaded)
        assert "kenning.client" in loaded  # answered by the daemon


def test_the_preset_help_names_every_preset():
    named = PRESET_HELP.replace(",", " ").replace("(", " ").split()
    assert set(PRESETS) <= set(named), set(PRESETS) - set(named)
