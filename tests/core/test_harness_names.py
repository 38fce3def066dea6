"""Harness names are one enum (core.events.Harness): the hook adapters and connectors name theirs
from it, and a misspelt name in sessions.idle_end_harnesses fails when the config loads."""

from __future__ import annotations

import pytest

from kenning.core.config import load_settings
from kenning.core.errors import ConfigError
from kenning.core.events import Harness
from kenning.hooks.adapters import claude_code, codex, copilot, gemini, opencode
from kenning.hooks.connectors import codex as codex_connector, copilot as copilot_connector
from kenning.hooks.connectors import gemini as gemini_connector, opencode as opencode_connector


def test_every_adapter_and_connector_names_a_harness_of_the_enum():
    for module in (claude_code, codex, copilot, gemini, opencode, codex_connector, copilot_connector, gemini_connector,
                   opencode_connector):
        assert Harness(module.HARNESS) in Harness


def test_a_misspelt_idle_end_harness_fails_when_the_config_loads(tmp_path):
    (tmp_path / "config.yaml").write_text("sessions:\n  idle_end_harnesses: [codx]\n")
    with pytest.raises(ConfigError, match="sessions.idle_end_harnesses.0.*'claude-code', 'codex'"):
        load_settings(environ={"KENNING_HOME": str(tmp_path)})
    (tmp_path / "config.yaml").write_text("sessions:\n  idle_end_harnesses: [codex, gemini]\n")
    harnesses = load_settings(environ={"KENNING_HOME": str(tmp_path)}).sessions.idle_end_harnesses
    assert harnesses == [Harness.CODEX, Harness.GEMINI] and harnesses == ["codex", "gemini"]
