"""This suite runs on both store backends (node ids carry [sqlite] / [postgres])."""

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request) -> str:
    return request.param
