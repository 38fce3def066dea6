"""A new user's first visit, in headless Chromium against a real daemon that has a token.

The dashboard asks for the token once (instead of every tab failing with 401), keeps it in
localStorage, shows what to do on an empty store, and then shows which recall legs found
each memory. Screenshots land in bench/out/ (dashboard-token.png, dashboard-first-run.png,
dashboard-recall-legs.png).
"""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from dashboard.conftest import shot
from bench.harnesses.daemon import start_daemon

TOKEN = "first-run-token-7f3a"


@pytest.fixture(scope="module")
def token_daemon(tmp_path_factory):
    daemon = start_daemon(tmp_path_factory.mktemp("dash-token"), f"auth_token: {TOKEN}\n")
    yield daemon
    daemon.stop()


def test_token_prompt_first_run_and_recall_legs(page, token_daemon):
    page.goto(f"{token_daemon.base_url}/#/memories")
    prompt = page.get_by_test_id("token-prompt")
    expect(prompt).to_be_visible()
    expect(page.locator("[role=alert]")).to_have_count(0)  # no tab failing on its own with 401
    shot(page, "dashboard-token.png")

    page.get_by_test_id("token-input").fill(TOKEN)
    prompt.get_by_role("button", name="Save and reload").click()
    first_run = page.get_by_test_id("first-run")
    expect(first_run).to_be_visible()
    for step in ("kenning connect claude-code", "kenning ingest git", "kenning remember"):
        expect(first_run).to_contain_text(step)
    assert page.evaluate("localStorage.getItem('kenning.token')") == TOKEN
    shot(page, "dashboard-first-run.png")

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=token_daemon.base_url, headers=headers, timeout=60) as http:
        for content in ("Deploy the payments service with scripts/deploy-payments.sh after the staging check",
                        "Payments webhooks are retried for 72 hours by Stripe",
                        "The release train leaves every Tuesday; ship fixes before Monday noon"):
            http.post("/api/memory/remember", json={"content": content, "project": "payments"}).raise_for_status()
        expected = http.post("/api/memory/recall", json={"query": "how do we ship payments", "limit": 50}).json()

    page.reload()
    expect(page.get_by_test_id("memory-count")).to_have_text("3 memories")
    page.get_by_test_id("memory-search").fill("how do we ship payments")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("memory-count")).to_contain_text("confident match")
    confident = [hit for hit in expected["results"] if hit["match"] in ("strong", "likely")]
    rows = page.get_by_test_id("memory-list").locator("a")
    expect(rows).to_have_count(len(confident))  # weak matches wait behind "show N weak matches" (issue 35)
    words = {"bm25": "words", "vector": "meaning"}
    for i, hit in enumerate(confident):
        expect(rows.nth(i).get_by_test_id("recall-match")).to_have_text(f"{hit['match']} match")
        legs = rows.nth(i).get_by_test_id("recall-legs")
        for leg, v in hit["legs"].items():
            expect(legs.locator(f"[data-leg={leg}]")).to_contain_text(words.get(leg, leg))
            expect(legs.locator(f"[data-leg={leg}]")).to_have_attribute("title", re.compile(f"rank {v['rank']}"))
    assert any(len(hit["legs"]) >= 2 for hit in expected["results"])  # some memory found by both legs
    shot(page, "dashboard-recall-legs.png")


def test_graph_tab_opens_on_the_most_connected_entity(page, token_daemon):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=token_daemon.base_url, headers=headers, timeout=60) as http:
        for i in range(4):  # a frequently mentioned entity with no relation: noise for a starting point
            http.post("/api/memory/remember", json={"content": f"Grafana panel {i} shows queue depth"}).raise_for_status()
        http.post("/api/memory/remember", json={"content": "We switched from MySQL to PostgreSQL for billing"})
        by_mentions = http.get("/api/graph/entities", params={"limit": 1}).json()["items"][0]
        hub = http.get("/api/graph/entities", params={"sort": "relations", "limit": 1}).json()["items"][0]
    assert hub["name"] in {"MySQL", "PostgreSQL"} and by_mentions["name"] != hub["name"]
    page.goto(f"{token_daemon.base_url}/#/graph")
    page.evaluate(f"localStorage.setItem('kenning.token', '{TOKEN}')")
    page.reload()
    expect(page.get_by_test_id("graph-view").locator("h3")).to_have_text(f"{hub['name']} ({hub['entity_type']})")


def test_a_refused_saved_token_is_asked_for_again(page, token_daemon):
    page.goto(f"{token_daemon.base_url}/#/sessions")
    page.evaluate("localStorage.setItem('kenning.token', 'stale-token')")
    page.reload()
    prompt = page.get_by_test_id("token-prompt")
    expect(prompt).to_contain_text("was refused")
    page.get_by_test_id("token-input").fill(TOKEN)
    prompt.get_by_role("button", name="Save and reload").click()
    expect(page.get_by_test_id("token-prompt")).to_have_count(0)
    expect(page.locator("main")).to_contain_text("kenning connect claude-code")  # the sessions empty state
