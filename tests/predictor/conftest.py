"""Predictor fixtures: a real migrated SQLite file filled by the simulated user."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.config import Settings, load_settings
from kenning.predictor.synthetic import SyntheticUser
from kenning.store.db import open_database


@pytest.fixture
def pred_settings(tmp_path: Path) -> Settings:
    home = tmp_path / "home"
    home.mkdir()
    return load_settings(environ={"KENNING_HOME": str(home)})


@pytest.fixture
def pdb(pred_settings: Settings):
    db = open_database(pred_settings.db_path)
    yield db
    db.close()


@pytest.fixture
def user(pdb) -> SyntheticUser:
    u = SyntheticUser(dims=384, seed=7)
    u.populate(pdb)
    return u
