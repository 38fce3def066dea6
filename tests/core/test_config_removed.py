"""Settings that looked live but did nothing were removed (issue 13): a config that still sets
one is refused with a one-line error naming the key; the settings that stay are read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kenning.core.config import load_settings
from kenning.core.config_pipeline import REMOVED_KEYS
from kenning.core.errors import ConfigError
from kenning.core.types import MemoryDraft


def _nested(dotted: str, value: object) -> dict:
    data: object = value
    for part in reversed(dotted.split(".")):
        data = {part: data}
    return data  # type: ignore[return-value]


def _load(home: Path, config: dict):
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return load_settings(environ={"KENNING_HOME": str(home)})


@pytest.mark.parametrize("dotted", sorted(REMOVED_KEYS))
def test_a_removed_key_is_an_error_naming_it(tmp_path: Path, dotted: str):
    value = {"enabled": True} if dotted.count(".") == 1 and not dotted.endswith("_enabled") else True
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, _nested(dotted, value))
    message = str(err.value)
    assert f"unknown key {dotted}: removed in" in message and "config.yaml" in message
    assert "\n" not in message


def test_camel_case_spellings_are_refused_too(tmp_path: Path):
    with pytest.raises(ConfigError, match="unknown key pipeline.telemetry_enabled: removed in"):
        _load(tmp_path, {"pipeline": {"telemetryEnabled": False}})
    with pytest.raises(ConfigError, match="unknown key pipeline.graph.boost_timeout_ms: removed in"):
        _load(tmp_path, {"pipeline": {"graph": {"enabled": True, "boostTimeoutMs": 500}}})


def test_the_keys_that_stay_load(tmp_path: Path):
    settings = _load(tmp_path, {"pipeline": {"graph": {"enabled": False, "feedback_delta": 0.05},
                                             "hints": {"enabled": True}},
                                "recall": {"default_limit": 3}})
    assert settings.pipeline.graph.enabled is False and settings.pipeline.hints.enabled is True
    assert settings.recall.default_limit == 3


def test_default_limit_and_hints_reach_recall(tmp_path: Path):
    """recall.default_limit is the size of a recall that names no limit; pipeline.hints.enabled
    makes the default recall match the generated hints (both were read by nothing before)."""
    from kenning.service import Kenning

    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)}, recall={"default_limit": 2},
                             pipeline={"hints": {"enabled": True}})
    service = Kenning(settings).start(background=False)
    try:
        service.remember_many([MemoryDraft(content=f"The deploy script step {i} restarts the web tier.")
                               for i in range(5)])
        assert len(service.recall("deploy script restarts")) == 2
        assert len(service.recall("deploy script restarts", limit=4)) == 4
        assert service.recall_config().extras.hints is True
    finally:
        service.close()
    off = load_settings(environ={"KENNING_HOME": str(tmp_path / "off")})
    assert off.recall.default_limit == 10 and off.pipeline.hints.enabled is False
