"""Browser fixtures: Debian chromium driven by pip playwright, daemons seeded by an HTTP replay."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from dashboard.replay import replay
from bench.harnesses.daemon import start_daemon

# The page waits on a daemon sharing 2 cores with the rest of the suite: 5 s (playwright's default)
# ran out under load while the answer was on its way.
expect.set_options(timeout=20_000)

CHROMIUM = os.environ.get("KENNING_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[2] / "bench" / "out"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def chromium():
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: run `make browser` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def cold_daemon(tmp_path_factory):
    """Default config (predictor needs 10 scored sessions); 4 sessions replayed: cold start."""
    daemon = start_daemon(tmp_path_factory.mktemp("dash-cold"), "")
    try:
        daemon.replayed = replay(daemon.base_url, 4)
        settle(daemon)
        yield daemon
    finally:
        daemon.stop()


ACTIVE_CONFIG = "predictor:\n  min_training_sessions: 5\n  train_interval_sessions: 5\n"


def wait_for(predicate, timeout: float = 180.0, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not met in time")


def settle(daemon, timeout: float = 180.0) -> None:
    """Wait until the replay's background work is done: no job pending or leased and the memory
    count the same on three reads a second apart. The pipeline extracts from replayed sessions after
    the replay returns; a test that reads the count from the API and then from the page saw it grow
    in between (CI: '52 memories' expected, the page had loaded 51)."""
    def quiet() -> int | None:
        totals = daemon.get("/api/pipeline/status").json()["queue"]["totals"]
        if totals["pending"] or totals["leased"]:
            return None
        return int(daemon.get("/api/memory", limit=1).json()["total"])

    seen: list[int | None] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.append(quiet())
        if len(seen) >= 3 and seen[-1] is not None and seen[-3:] == [seen[-1]] * 3:
            return
        time.sleep(1.0)
    raise AssertionError("the replay's background work did not settle in time")


@pytest.fixture(scope="module")
def active_daemon(tmp_path_factory):
    """A predictor that has trained and earns influence: replay 16 sessions (cold start, then the
    first training run in the real sidecar), wait for the model, replay 20 more that it scores."""
    daemon = start_daemon(tmp_path_factory.mktemp("dash-active"), ACTIVE_CONFIG)
    try:
        status = daemon.get("/api/predictor/status")
        if status.status_code == 404:
            pytest.skip("the predictor API is not part of this daemon")
        replay(daemon.base_url, 16)
        wait_for(lambda: daemon.get("/api/predictor/status").json()["first_training_done"])
        replay(daemon.base_url, 20, first=16)
        wait_for(lambda: daemon.get("/api/predictor/comparisons", limit=1).json()["total"] > 0)
        wait_for(lambda: not daemon.get("/api/predictor/status").json()["training_in_progress"])
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    yield pg
    context.close()
    assert not pg.errors, f"uncaught errors in the page: {pg.errors}"


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=True)
    return path
