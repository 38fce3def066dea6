"""Every dashboard view on a store with a week of sessions (issue 35), in a real Chromium, each screenshot
(bench/out/first-week-*.png) taken after the view was checked for what the issue found wrong:

- memories: the list of the replayed world;
- recall: each hit says how well it matches (strong / likely), no raw fused score; a question nothing
  answers says "No confident match" and hides the weak hits behind a button;
- sessions: the session view asks nothing that answers 404 (the observer's view of a session with no
  tool step is empty, not missing), and says what the session wrote (its episodes), not "taught nothing";
- review: what waits for review;
- graph: no speaker label ("User", "Assistant") among the entities; searching "Helm" moves the detail
  pane to Helm;
- predictor and health: render (cold start: fewer sessions than training needs).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from dashboard.conftest import shot
from dashboard.replay import replay
from bench.harnesses.daemon import start_daemon

WEEK = 24  # replay sessions are 7 hours apart: 24 of them span a week
EXCHANGE = ("User: how do we roll back a failed Helm release?\n"
            "Assistant: run helm rollback billing with the previous revision, then check the pods")


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    daemon = start_daemon(tmp_path_factory.mktemp("dash-week"), "")
    try:
        daemon.replayed = replay(daemon.base_url, WEEK)
        with daemon.client() as http:  # a transcript-shaped memory: its speaker labels must not become entities
            http.post("/api/memory/remember", json={"content": EXCHANGE, "project": "infra"}).raise_for_status()
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def watched(page):
    """The page, with every response of the daemon's API that answered 404 or 5xx noted."""
    page.bad = []
    page.on("response", lambda r: page.bad.append(f"{r.status} {r.url}") if "/api/" in r.url and
            (r.status == 404 or r.status >= 500) else None)
    return page


def open_tab(page, daemon, route: str):
    page.goto(f"{daemon.base_url}/#/{route}")
    expect(page.locator("[role=tab][aria-selected=true]")).to_have_count(1)


def test_memories_view(watched, week):
    open_tab(watched, week, "memories")
    total = week.get("/api/memory", limit=1).json()["total"]
    expect(watched.get_by_test_id("memory-count")).to_have_text(f"{total} memories")
    expect(watched.get_by_test_id("memory-list").locator("a")).to_have_count(25)  # the first page
    shot(watched, "first-week-memories.png")
    assert not watched.bad, watched.bad


def test_recall_view_says_how_well_each_hit_matches(watched, week):
    open_tab(watched, week, "memories")
    watched.get_by_test_id("memory-search").fill("how do we deploy the API?")
    watched.keyboard.press("Enter")
    expect(watched.get_by_test_id("memory-count")).to_contain_text("confident match")
    rows = watched.get_by_test_id("memory-list").locator("a")
    expect(rows.first).to_be_visible()
    labels = watched.get_by_test_id("recall-match").all_inner_texts()
    assert labels and set(labels) <= {"strong match", "likely match"}, labels
    assert "score" not in watched.get_by_test_id("memory-list").inner_text()  # no raw RRF score
    expect(watched.get_by_test_id("memory-list")).to_contain_text("blue-green deploys")
    shot(watched, "first-week-recall.png")

    watched.get_by_test_id("memory-search").fill("what is the office wifi password?")
    watched.keyboard.press("Enter")
    expect(watched.get_by_test_id("memory-count")).to_contain_text("No confident match")
    expect(rows).to_have_count(0)
    toggle = watched.get_by_test_id("toggle-weak")
    expect(toggle).to_contain_text("weak match")
    shot(watched, "first-week-recall-none.png")
    toggle.click()
    expect(rows.first).to_be_visible()
    assert set(watched.get_by_test_id("recall-match").all_inner_texts()) == {"weak match"}
    assert not watched.bad, watched.bad


def test_sessions_view_says_what_each_session_wrote_and_asks_nothing_missing(watched, week):
    open_tab(watched, week, "sessions")
    rows = watched.get_by_test_id("session-list").locator("a")
    expect(rows).to_have_count(WEEK)
    key = "replay-001-billing-webhooks"
    expect(rows.filter(has_text=key).get_by_test_id("session-about")).to_contain_text(re.compile(r"wrote \d+ episode"))
    lines = watched.get_by_test_id("session-about").all_inner_texts()
    assert "taught nothing" not in " ".join(lines)
    assert any("wrote nothing" in line for line in lines)  # the quick glances (one prompt, no answer) wrote none
    rows.filter(has_text=key).click()
    detail = watched.get_by_test_id("session-detail")
    expect(detail.get_by_test_id("session-taught")).to_contain_text(re.compile(r"What it wrote — \d+ episode"))
    expect(detail.get_by_test_id("candidates").locator("tbody tr").first).to_be_visible()
    expect(detail.get_by_test_id("observer")).to_be_visible()
    expect(detail.get_by_test_id("session-timeline")).to_contain_text("session:started")
    shot(watched, "first-week-sessions.png")
    assert not watched.bad, watched.bad  # /api/observer/sessions/<key> answered, no 404


def test_review_view(watched, week):
    open_tab(watched, week, "review")
    expect(watched.locator("main, #app").first).to_be_visible()
    watched.wait_for_load_state("networkidle")
    shot(watched, "first-week-review.png")
    assert not watched.bad, watched.bad


def test_graph_view_has_no_speakers_and_search_moves_the_detail(watched, week):
    names = {e["name"].lower() for e in week.get("/api/graph/entities", limit=200).json()["items"]}
    assert "helm" in names and not {"user", "assistant"} & names, sorted(names)[:40]
    stripe = week.get("/api/graph/entity/Stripe").json()
    open_tab(watched, week, f"graph/{stripe['id']}")  # the detail pane on another entity first
    expect(watched.get_by_test_id("graph-view").locator("h3")).to_have_text(f"Stripe ({stripe['entity_type']})")
    watched.get_by_test_id("entity-search").fill("Helm")
    watched.keyboard.press("Enter")
    helm = week.get("/api/graph/entity/Helm").json()
    expect(watched).to_have_url(re.compile(f"#/graph/{helm['id']}$"))
    expect(watched.get_by_test_id("graph-view").locator("h3")).to_have_text(f"Helm ({helm['entity_type']})")
    expect(watched.get_by_test_id("graph-chart").locator("canvas")).to_have_count(1)
    shot(watched, "first-week-graph.png")
    assert not watched.bad, watched.bad


def test_predictor_and_health_views(watched, week):
    open_tab(watched, week, "predictor")
    watched.wait_for_load_state("networkidle")
    expect(watched.locator("body")).to_contain_text(re.compile("collecting|training|cold", re.I))
    shot(watched, "first-week-predictor.png")
    open_tab(watched, week, "health")
    expect(watched.get_by_test_id("composite-health")).to_contain_text("health")
    expect(watched.get_by_test_id("domain-predictor")).to_be_visible()
    assert "not wired" not in watched.locator("body").inner_text()
    shot(watched, "first-week-health.png")
    assert not watched.bad, watched.bad
