"""Settings the code no longer reads (issue 32: the prompt bar replaced the prompt's floors) are retired:
a config.yaml that still sets one loads, with a one-line notice naming the key, and the key is gone."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from kenning.core.config import RETIRED_KEYS, load_settings
from kenning.core.config_sessions import RankingSettings, SessionSettings


def _load(home: Path, config: dict):
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return load_settings(environ={"KENNING_HOME": str(home)})


def test_a_config_that_still_sets_the_retired_prompt_keys_loads_with_a_notice(tmp_path: Path,
                                                                               caplog: pytest.LogCaptureFixture):
    config = {"sessions": {"prompt_min_similarity": 0.4, "inject_limit": 7,
                           "ranking": {"promptRelativeFloor": 0.3, "prompt_similarity_margin": 0.2,
                                       "prompt_min_probability": 0.6}}}
    with caplog.at_level(logging.WARNING, logger="kenning.config"):
        settings = _load(tmp_path, config)
    assert settings.sessions.inject_limit == 7 and settings.sessions.ranking.prompt_min_probability == 0.6
    notices = [r.getMessage() for r in caplog.records if r.name == "kenning.config"]
    assert len(notices) == 3
    for dotted in RETIRED_KEYS:
        line = next(n for n in notices if f" {dotted} is no longer read" in n)
        assert "config.yaml" in line and "\n" not in line


def test_the_retired_keys_are_not_settings_any_more(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    for dotted in RETIRED_KEYS:
        leaf = dotted.rsplit(".", 1)[1]
        assert leaf not in RankingSettings.model_fields and leaf not in SessionSettings.model_fields
    with caplog.at_level(logging.WARNING, logger="kenning.config"):
        _load(tmp_path, {"sessions": {"inject_limit": 5}})
    assert not [r for r in caplog.records if r.name == "kenning.config"]  # nothing retired: no notice
