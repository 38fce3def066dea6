"""Claude Code hook entry points: `kenning hook <event>` and `python -m kenning.hooks <event>`.

The work is done by the Claude Code adapter (hooks/adapters/claude_code.py) on the runner every
harness shares (hooks/adapters/hookrun.py: one deadline, confined transcript reads, the spool when
the daemon is down, exit 0 always). This module keeps the names other code imports.
"""

from __future__ import annotations

from kenning.hooks.adapters.claude_code import (  # noqa: F401 - re-exported
    CARRIES, EVENTS, INJECTING, git_branch, handle, main, parse_feedback, recent_context, tool_response,
)
from kenning.hooks.adapters.hookrun import project_of  # noqa: F401 - re-exported

__all__ = ["EVENTS", "INJECTING", "CARRIES", "handle", "main", "parse_feedback", "project_of", "git_branch",
           "recent_context", "tool_response"]
