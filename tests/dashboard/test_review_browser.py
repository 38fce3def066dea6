"""The Review view and the Sessions tab's "what was this session about" in a real browser
(Debian chromium, headless) against a real daemon seeded over HTTP."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from dashboard.conftest import shot
from bench.harnesses.daemon import start_daemon

KEY = "review-session-0001"
TASK = "fix the checkout timeout in payments"
LEARNED = [
    ("Checkout calls to the payment gateway must time out after 30 seconds", "stated-rule"),
    ("The payments service must retry a declined card once", "stated-rule"),
    ("Exactly, the webhook must be idempotent", "accepted-statement"),
]


@pytest.fixture(scope="module")
def review_daemon(tmp_path_factory):
    daemon = start_daemon(tmp_path_factory.mktemp("dash-review"), "sessions:\n  latency_budget_ms: 20000\n")
    try:
        with httpx.Client(base_url=daemon.base_url, timeout=300) as http:
            http.post("/api/hooks/session-start", json={"session_key": KEY, "project": "shop", "harness": "claude-code",
                                                         "timestamp": "2026-02-01T09:00:00Z"}).raise_for_status()
            http.post("/api/hooks/user-prompt-submit", json={"session_key": KEY, "prompt": TASK,
                                                              "timestamp": "2026-02-01T09:01:00Z"}).raise_for_status()
            http.post("/api/hooks/session-end", json={
                "session_key": KEY, "wait": True, "timestamp": "2026-02-01T09:30:00Z",
                "transcript": f"User: {TASK}\nAssistant: Done, the timeout is 30 s now.\n"}).raise_for_status()
            ids = []
            for content, rule in LEARNED:
                r = http.post("/api/memory/remember", json={
                    "content": content, "type": "constraint", "project": "shop", "confidence": 0.6,
                    "source": "session-summary", "session_key": KEY, "created_at": "2026-01-01T00:00:00Z",
                    "metadata": {"claim": {"rule": rule, "speaker": "assistant", "confidence": 0.6}}})
                r.raise_for_status()
                ids.append(r.json()["id"])
                http.patch(f"/api/memory/{ids[-1]}", json={"needs_review": True}).raise_for_status()
        daemon.ids = ids
        yield daemon
    finally:
        daemon.stop()


def item(page, memory_id: str):
    return page.locator(f'[data-testid="review-item"][data-id="{memory_id}"]')


def test_review_view_accept_edit_reject(page, review_daemon):
    accept_id, edit_id, reject_id = review_daemon.ids
    page.goto(f"{review_daemon.base_url}/#/review")
    group = page.get_by_test_id("review-group").filter(has_text=TASK)
    expect(group).to_be_visible()
    expect(group).to_contain_text("claude-code")
    for memory_id in review_daemon.ids:
        expect(item(page, memory_id)).to_be_visible()
    expect(item(page, accept_id).get_by_test_id("review-evidence")).to_contain_text("stated-rule")
    expect(item(page, accept_id)).to_contain_text("needs review")
    shot(page, "dashboard-review.png")

    page.goto(f"{review_daemon.base_url}/#/memories/{accept_id}")  # the memory detail shows its evidence
    detail = page.get_by_test_id("memory-detail")
    expect(detail.get_by_test_id("memory-evidence")).to_contain_text("stated-rule · said by assistant")
    expect(detail.get_by_test_id("memory-review")).to_contain_text("needs review")
    page.goto(f"{review_daemon.base_url}/#/review")

    item(page, accept_id).get_by_role("button", name="Accept").click()
    expect(item(page, accept_id)).to_have_count(0)
    assert review_daemon.get(f"/api/memory/{accept_id}").json()["user_verified"] is True

    item(page, edit_id).get_by_role("button", name="Edit").click()
    item(page, edit_id).get_by_label("Corrected text").fill("The payments service retries a declined card once")
    item(page, edit_id).get_by_role("button", name="Save and accept").click()
    expect(item(page, edit_id)).to_have_count(0)
    stored = review_daemon.get(f"/api/memory/{edit_id}").json()
    assert stored["content"] == "The payments service retries a declined card once"
    assert stored["metadata"]["review"]["status"] == "edited"

    item(page, reject_id).get_by_role("button", name="Reject").click()
    expect(item(page, reject_id)).to_have_count(0)
    kept = review_daemon.get(f"/api/memory/{reject_id}").json()
    assert kept["is_deleted"] is False and kept["metadata"]["review"]["status"] == "rejected"

    page.get_by_label("Review status").select_option("rejected")
    expect(item(page, reject_id)).to_be_visible()
    expect(item(page, reject_id)).to_contain_text("rejected")
    rules = page.get_by_test_id("review-rules")
    expect(rules.locator("tr").filter(has_text="accepted-statement")).to_contain_text("100 %")


def test_sessions_tab_says_what_each_session_was_about(page, review_daemon):
    page.goto(f"{review_daemon.base_url}/#/sessions")
    row = page.get_by_test_id("session-list").locator("a").filter(has_text=KEY)
    expect(row.get_by_test_id("session-task")).to_have_text(TASK)
    expect(row.get_by_test_id("session-about")).to_contain_text("claude-code")
    expect(row.get_by_test_id("session-about")).to_contain_text("wrote")  # what it wrote, by kind (issue 35)
    row.click()
    taught = page.get_by_test_id("session-detail").get_by_test_id("session-taught")
    expect(taught).to_contain_text("Checkout calls to the payment gateway must time out after 30 seconds")
    shot(page, "dashboard-session-taught.png")
