"""`kenning connect cursor`: the MCP entry in .cursor/mcp.json and .cursor/rules/kenning.mdc holding
the project's standing rules (a real daemon), refreshed by --rules, removed by --uninstall."""

from __future__ import annotations

import json

from bench.harnesses.kenning_setup import connect
from tests.harness.kenning_checks import remember


def test_cursor_gets_the_mcp_server_and_the_standing_rules(daemon, tmp_path):
    project = tmp_path / "proj-cursor"
    project.mkdir()
    rule = "Never call the billing API from request handlers; enqueue a job instead"
    remember(daemon, rule, "proj-cursor", type="constraint")
    remember(daemon, "Maybe we could try the new queue library someday", "proj-cursor", type="decision",
             confidence=0.4)  # not held with confidence: not a standing rule
    remember(daemon, "Another project's rule: tabs, not spaces", "proj-other", type="preference")

    connect("cursor", "--project", daemon=daemon, cwd=project)
    mcp = json.loads((project / ".cursor" / "mcp.json").read_text())
    assert mcp["mcpServers"]["kenning"]["args"][-1] == "mcp"
    assert mcp["mcpServers"]["kenning"]["env"]["KENNING_PORT"] == str(daemon.port)
    rules = (project / ".cursor" / "rules" / "kenning.mdc").read_text()
    assert rules.startswith("---\n") and "alwaysApply: true" in rules
    assert rule in rules
    assert "new queue library" not in rules and "tabs, not spaces" not in rules

    later = "Run the migrations with scripts/migrate.sh before the tests"
    remember(daemon, later, "proj-cursor", type="decision")
    refreshed = connect("cursor", "--rules", daemon=daemon, cwd=project)
    assert "2 standing rule(s)" in refreshed.stdout
    assert later in (project / ".cursor" / "rules" / "kenning.mdc").read_text()

    connect("cursor", "--project", "--uninstall", daemon=daemon, cwd=project)
    assert not (project / ".cursor").exists()  # both files and the folders made for them


def test_a_rule_file_that_is_not_kennings_is_left_alone(daemon, tmp_path):
    project = tmp_path / "proj-cursor-own"
    (project / ".cursor" / "rules").mkdir(parents=True)
    own = project / ".cursor" / "rules" / "kenning.mdc"
    own.write_text("my own rules\n")
    result = connect("cursor", "--rules", daemon=daemon, cwd=project)
    assert "is not kenning's" in result.stdout and own.read_text() == "my own rules\n"
