"""Pipeline fixtures: the fake LLM server and Kenning services with chosen settings."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # pipeline_helpers sits next to this file

from pipeline_helpers import FAST_WORKER, start_fake_llm, stop_fake_llm  # noqa: E402

from kenning.core.config import load_settings


@pytest.fixture
def fake_llm():
    fake = start_fake_llm()
    yield fake
    stop_fake_llm(fake)


@pytest.fixture
def make_kenning(tmp_path: Path, store_config: dict[str, str]):
    """Build started (background=False) Kenning services with chosen llm/pipeline settings."""
    from kenning.service import Kenning

    built: list[Any] = []

    def factory(*, llm: dict | None = None, pipeline: dict | None = None, name: str = "home") -> Any:
        home = tmp_path / name
        home.mkdir(exist_ok=True)
        pipe = {"worker": dict(FAST_WORKER), **(pipeline or {})}
        settings = load_settings(environ={"KENNING_HOME": str(home)}, llm=llm or {"provider": "offline"},
                                 pipeline=pipe, store=store_config)
        service = Kenning(settings).start(background=False)
        built.append(service)
        return service

    yield factory
    for service in built:
        service.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request) -> str:
    """This suite runs on both store backends (node ids carry [sqlite] / [postgres])."""
    return request.param
