"""Diagnostics fixtures: a fake remote embedding server and daemons configured to use it."""

from __future__ import annotations

import pytest

from tests.diagnostics.fake_embeddings import FakeEmbeddings


@pytest.fixture
def fake_embeddings():
    server = FakeEmbeddings()
    yield server
    server.close()


@pytest.fixture
def obs_daemon(daemon_factory, fake_embeddings):
    """A daemon of its own (state that tests break on purpose), embedding through the fake server."""
    return daemon_factory(fake_embeddings.config_yaml("predictor:\n  enabled: false\n"))


@pytest.fixture
def http(obs_daemon):
    with obs_daemon.client() as client:
        yield client
