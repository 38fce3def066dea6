"""The observer's view of a session kenning knows but saw no tool step of is empty, not missing (issue 35:
the dashboard asks for it on every session view and got a 404); a key no session ever had is still 404."""

from __future__ import annotations

import pytest

from kenning.core.events import Harness, SessionStarted
from kenning.core.errors import NotFound


def test_a_known_session_without_tool_steps_has_an_empty_view(kenning):
    kenning.sessions.session_start(SessionStarted(session_key="quiet-session", project="demo",
                                                  harness=Harness.CLAUDE_CODE))
    view = kenning.observer.session("quiet-session")
    assert view == {"session_key": "quiet-session", "live": None, "finished": None, "signals": [],
                    "step_injections": []}
    with pytest.raises(NotFound):
        kenning.observer.session("never-started")
