"""Topic diversity is one setting, recall.topic_diversity: session start reads it, and the old
sessions.diversity_* keys of a config.yaml still land there."""

from __future__ import annotations

import pytest

from kenning.core.events import SessionStarted
from kenning.core.config import TopicDiversity, load_settings
from kenning.core.types import MemoryDraft

OLD_KEYS = "sessions:\n  diversity_threshold: 0.0\n  diversity_decay: 0.0\n  diversityFloor: 0.0\n"


def test_the_old_sessions_keys_are_read_into_recall_topic_diversity(tmp_path):
    (tmp_path / "config.yaml").write_text(OLD_KEYS)
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)})
    assert settings.recall.topic_diversity == TopicDiversity(threshold=0.0, decay=0.0, floor=0.0)
    assert not hasattr(settings.sessions, "diversity_threshold")
    # the new place wins when both are set
    (tmp_path / "config.yaml").write_text(OLD_KEYS + "recall:\n  topic_diversity:\n    decay: 0.25\n")
    assert load_settings(environ={"KENNING_HOME": str(tmp_path)}).recall.topic_diversity.decay == 0.25


@pytest.fixture
def settings(home, store_config, unused_port):
    (home / "config.yaml").write_text(OLD_KEYS)  # every overlap scores 0: (1 - floor) * decay^n + floor
    return load_settings(environ={"KENNING_HOME": str(home)}, port=unused_port, store=store_config)


def test_session_start_spreads_topics_by_recall_topic_diversity(kenning):
    kenning.remember_many([MemoryDraft(content=f"We deploy the billing service with scripts/deploy.sh, step {i}",
                                       project="div", importance=0.8, applies="project")  # opens a session (issue 31)
                          for i in range(4)])
    kenning.sessions.session_start(SessionStarted(session_key="d1", project="div", context="deploy billing"))
    factors = [r["diversity_factor"] for r in kenning.sessions.detail("d1")["memories"]
               if r["diversity_factor"] is not None]
    assert factors and min(factors) == 0.0  # the defaults (floor 0.1) never go below 0.1
