"""Sessions become memory (issue 10) against one real daemon: episodes, injection for the task,
decisions and amendments, no self-pollution, provenance."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from bench.harnesses.daemon import start_daemon

CONFIG = "sessions:\n  latency_budget_ms: 20000\n"


@pytest.fixture(scope="module")
def edaemon(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("episodes-daemon"), CONFIG)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def http(edaemon):
    with edaemon.client(timeout=300) as client:
        yield client


def hook(http, event: str, body: dict) -> dict:
    response = http.post(f"/api/hooks/{event}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def end_session(http, key: str, transcript: str) -> dict:
    result = hook(http, "session-end", {"session_key": key, "transcript": transcript, "wait": True})
    assert result["summary"]["status"] == "done", result
    return result["summary"]


def session_memories(http, key: str, **params) -> list[dict]:
    response = http.get("/api/memory", params={"session_key": key, "limit": 1000, **params})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def jsonl(turns: list[tuple[str, str, str]]) -> str:
    return "\n".join(json.dumps({"type": role, "timestamp": at, "message": {"role": role, "content": text}})
                     for role, text, at in turns)


def test_episodes_keep_time_and_position_and_are_idempotent(http):
    project, key = f"ep-{uuid.uuid4().hex[:6]}", f"sess-{uuid.uuid4().hex}"
    hook(http, "session-start", {"session_key": key, "project": project, "timestamp": "2025-03-01T09:00:00Z"})
    transcript = jsonl([
        ("user", "The flux capacitor test flakes on CI, any idea why?", "2025-03-01T09:01:00Z"),
        ("assistant", "It reads the wall clock; freeze time in the fixture.", "2025-03-01T09:02:00Z"),
        ("user", "Good. Also my token is sk-ant-abcdefghijklmnopqrstuvwxyz0123 for the deploy.", "2025-03-01T09:05:00Z"),
        ("assistant", "Noted, I will not store it.", "2025-03-01T09:06:00Z"),
    ])
    first = end_session(http, key, transcript)
    assert first["episodes"]["stored"] == 2
    episodes = sorted(session_memories(http, key, type="episode"), key=lambda m: m["metadata"]["episode_position"])
    assert [e["metadata"]["episode_position"] for e in episodes] == [0, 1]
    assert [e["created_at"][:19] for e in episodes] == ["2025-03-01T09:01:00", "2025-03-01T09:05:00"]
    assert episodes[0]["content"].startswith("User: The flux capacitor") and "Assistant: It reads" in episodes[0]["content"]
    assert "sk-ant-abcdefghij" not in episodes[1]["content"] and all(e["project"] == project for e in episodes)
    again = end_session(http, key, transcript)  # session-end re-run: nothing stored twice
    assert again["episodes"]["stored"] == 0
    assert len(session_memories(http, key, type="episode")) == 2
    hits = http.post("/api/memory/recall", json={"query": "why does the flux capacitor test flake", "project": project})
    assert episodes[0]["id"] in [h["id"] for h in hits.json()["results"]][:3]
    detail = http.get(f"/api/sessions/{key}").json()
    assert {e["id"] for e in episodes} <= {m["id"] for m in detail["created"]}


def test_pre_compaction_stores_the_episodes_so_far(http):
    key = f"sess-{uuid.uuid4().hex}"
    hook(http, "session-start", {"session_key": key, "project": "compact"})
    early = "User: which port does the gizmo proxy use?\nAssistant: 8443, set in proxy.toml.\n"
    response = http.post("/api/hooks/pre-compaction", json={"session_key": key, "transcript": early})
    assert response.status_code == 200 and response.json()["episodes"]["stored"] == 1
    later = early + "User: and the gizmo admin UI?\nAssistant: It listens on 9090 behind the proxy.\n"
    assert end_session(http, key, later)["episodes"]["stored"] == 1  # only what came after compaction
    assert len(session_memories(http, key, type="episode")) == 2


def test_episodes_switch_off(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("episodes-off"), CONFIG + "  episodes: false\n")
    try:
        with proc.client(timeout=300) as client:
            key = f"sess-{uuid.uuid4().hex}"
            summary = end_session(client, key, "User: where do the logs go?\nAssistant: To /var/log/app.\n")
            assert summary["episodes"]["stored"] == 0 and session_memories(client, key, type="episode") == []
    finally:
        proc.stop()


def test_first_prompt_gets_a_full_injection_later_prompts_five(http):
    project, key = f"inj-{uuid.uuid4().hex[:6]}", f"sess-{uuid.uuid4().hex}"
    memories = [{"content": f"Invoice rounding rule {i}: invoices for region {i} round totals half-even to cents",
                 "project": project, "importance": 0.2} for i in range(30)]
    memories += [{"content": f"Unrelated note {i} about garden hoses and tomato watering", "project": project,
                  "importance": 0.9} for i in range(15)]
    ids = [r["id"] for r in http.post("/api/memory/batch", json={"memories": memories}).json()["results"]]
    start = hook(http, "session-start", {"session_key": key, "project": project, "context": "garden"})
    global_id = http.post("/api/memory/remember", json={"content": "The zebra billing queue flushes at midnight UTC"}).json()["id"]
    first = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "How are invoice totals rounded to cents?"})
    assert 5 < len(first["memory_ids"]) <= 12
    assert not set(first["memory_ids"]) & set(start["memory_ids"])
    ids_line = next(line for line in first["inject"].splitlines() if line.startswith("IDs: "))
    assert set(first["memory_ids"]) <= set(ids_line[5:].split(", ")) <= set(first["memory_ids"]) | set(start["memory_ids"])
    second = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "Which invoice regions round half-even?"})
    assert 0 < len(second["memory_ids"]) <= 5 and not set(second["memory_ids"]) & set(first["memory_ids"])
    ids_line = next(line for line in second["inject"].splitlines() if line.startswith("IDs: "))
    assert sorted(ids_line[5:].split(", ")) == sorted(second["memory_ids"])  # exactly what this answer showed
    third = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "When does the zebra billing queue flush?"})
    assert global_id in third["memory_ids"]  # per-prompt recall includes global (no-project) memories
    rows = {r["memory_id"]: r for r in http.get(f"/api/sessions/{key}").json()["memories"]}
    assert {rows[m]["inject_phase"] for m in first["memory_ids"]} == {"prompt:1"}
    assert {rows[m]["inject_phase"] for m in second["memory_ids"]} == {"prompt:2"}


def chat(http, project: str, at: str, turns: list[tuple[str, str]]) -> tuple[str, dict]:
    key = f"chat-{uuid.uuid4().hex}"
    hook(http, "session-start", {"session_key": key, "project": project, "timestamp": at})
    transcript = "\n".join(f"{'User' if role == 'user' else 'Assistant'}: {text}" for role, text in turns)
    return key, end_session(http, key, transcript)


SETTLED = [
    ("user", "Duplicate contacts keep appearing after every sync run."),
    ("assistant", "Settled: merge_records keys on the lowercased email and keeps the record with the latest "
                  "updated timestamp on a collision."),
]
AMENDED = [
    ("user", "Amendment to the merge rule from last month: keep-latest wipes phone numbers we already had."),
    ("assistant", "Amended rule, superseding keep-latest: merge_records still keys on the lowercased email, but on "
                  "a collision the record with the most filled fields wins."),
]


def test_a_later_session_amends_the_rule_across_sessions(http):
    project = f"crm-{uuid.uuid4().hex[:6]}"
    old_key, _ = chat(http, project, "2025-01-10T10:00:00Z", SETTLED)
    new_key, summary = chat(http, project, "2025-02-10T10:00:00Z", AMENDED)
    old_rule = next(m for m in session_memories(http, old_key) if m["type"] == "decision")
    new_rule = next(m for m in session_memories(http, new_key) if m["type"] == "decision" and "Amended rule" in m["content"])
    assert summary["extraction"]["superseded"] == [old_rule["id"]]
    old_rule = http.get(f"/api/memory/{old_rule['id']}").json()
    assert old_rule["superseded_by"] == new_rule["id"] and old_rule["valid_until"].startswith("2025-02-10")
    assert new_rule["superseded_by"] is None and new_rule["created_at"].startswith("2025-02-10")
    assert new_rule["derived_from"] and new_rule["derived_from"][0] in {m["id"] for m in session_memories(http, new_key)}
    old_episodes = session_memories(http, old_key, type="episode")
    assert old_episodes and all(e["metadata"]["amended_by"] == [new_rule["id"]] for e in old_episodes)
    hits = http.post("/api/memory/recall", json={
        "query": "sync keeps duplicate contacts; fix merge_records collisions", "project": project}).json()["results"]
    sessions = [h["id"] in {m["id"] for m in session_memories(http, new_key)} for h in hits]
    assert sessions and sessions[0]  # the amended rule ranks before anything from the stale chat
    assert old_rule["id"] not in [h["id"] for h in hits]  # superseded: not recalled


def test_an_amendment_that_names_the_rule_it_replaces_is_stored_and_supersedes_it(http):
    """bench/longrun.py's words: the amendment repeats the old option, so it sits at cosine 0.93 from the
    rule it amends; it is an amendment, not a restatement of it."""
    project = f"inv-{uuid.uuid4().hex[:6]}"
    old_key, _ = chat(http, project, "2025-01-10T10:00:00Z", [
        ("user", "fix a failing test in invoice-renderer (dates)"),
        ("assistant", "Settled: invoice-renderer uses ISO 8601 strings in UTC for dates.")])
    new_key, summary = chat(http, project, "2025-02-10T10:00:00Z", [
        ("user", "document invoice-renderer (dates)"),
        ("user", "The dates of invoice-renderer keeps causing incidents; let's change it."),
        ("assistant", "Amended rule, superseding ISO 8601 strings in UTC: invoice-renderer uses unix epoch "
                      "milliseconds for dates from now on.")])
    old_rule = next(m for m in session_memories(http, old_key) if m["type"] == "decision")
    new_rule = next(m for m in session_memories(http, new_key) if m["type"] == "decision")
    assert "unix epoch milliseconds" in new_rule["content"]
    assert summary["extraction"]["superseded"] == [old_rule["id"]]
    assert http.get(f"/api/memory/{old_rule['id']}").json()["superseded_by"] == new_rule["id"]


def test_the_same_amendment_for_another_component_supersedes_nothing(http):
    """Two components amended the same way are two rules (bench/longrun.py: one component's amendment
    superseded the other's, cosine ~0.95, and its current rule was lost)."""
    project = f"par-{uuid.uuid4().hex[:6]}"
    amend = "Amended rule, superseding ISO 8601 strings in UTC: {} uses unix epoch milliseconds for dates from now on."
    first_key, _ = chat(http, project, "2025-01-10T10:00:00Z", [
        ("user", "The dates of invoice-renderer keeps causing incidents; let's change it."),
        ("assistant", amend.format("invoice-renderer"))])
    second_key, summary = chat(http, project, "2025-02-10T10:00:00Z", [
        ("user", "The dates of mail-digest keeps causing incidents; let's change it."),
        ("assistant", amend.format("mail-digest"))])
    first = next(m for m in session_memories(http, first_key) if m["type"] == "decision")
    second = next(m for m in session_memories(http, second_key) if m["type"] == "decision")
    assert "invoice-renderer" in first["content"] and "mail-digest" in second["content"]
    assert summary["extraction"]["superseded"] == []
    assert http.get(f"/api/memory/{first['id']}").json()["superseded_by"] is None


def test_parallel_rules_differ_only_in_the_names_they_are_about():
    from kenning.sessions.overlay import parallel_rules

    assert parallel_rules("Amended rule, superseding pytest with real SQLite files: webhook-relay uses unittest.",
                          "Amended rule, superseding pytest with real SQLite files: audit-trail uses unittest.")
    assert not parallel_rules(SETTLED[1][1], AMENDED[1][1])  # an amendment of the same rule
    assert not parallel_rules("Settled: ledger-sync uses exponential backoff capped at 30 seconds for retries.",
                              "Amended rule, superseding exponential backoff capped at 30 seconds: ledger-sync uses a "
                              "fixed 5 second delay with 3 attempts for retries from now on.")
    assert not parallel_rules("merge_records keeps the newest record.", "merge_records keeps the fullest record.")


AMENDED_AGAIN = [
    ("user", "Another amendment to the merge rule: ties between equally filled records need a winner."),
    ("assistant", "Amended rule, superseding the most-filled rule: merge_records keys on the lowercased email, the "
                  "record with the most filled fields wins, and on a tie the CRM record is kept."),
]


def test_a_stale_chat_comes_right_after_the_latest_amendment(http):
    project = f"crm2-{uuid.uuid4().hex[:6]}"
    old_key, _ = chat(http, project, "2025-01-10T10:00:00Z", SETTLED)
    mid_key, _ = chat(http, project, "2025-02-10T10:00:00Z", AMENDED)
    new_key, summary = chat(http, project, "2025-03-10T10:00:00Z", AMENDED_AGAIN)
    mid_rule = next(m for m in session_memories(http, mid_key) if "Amended rule" in m["content"])
    assert mid_rule["id"] in summary["extraction"]["superseded"]  # the amendment is amended in turn
    old_episodes = session_memories(http, old_key, type="episode")
    assert old_episodes and all(e["metadata"]["amended_by"] == [mid_rule["id"]] for e in old_episodes)
    # the query is the stale chat's own words: it matches them best, yet the latest rule comes first
    # (through the chain of amendments) and the stale chat still shows, right after it
    hits = http.post("/api/memory/recall", json={"query": SETTLED[0][1], "project": project}).json()["results"]
    session_of = {m["id"]: k for k in (old_key, mid_key, new_key) for m in session_memories(http, k)}
    order = [session_of.get(h["id"]) for h in hits]
    assert order[0] == new_key, order
    assert old_key in order and mid_rule["id"] not in [h["id"] for h in hits]
    stale = next(h for h in hits if session_of.get(h["id"]) == old_key)
    assert stale["score"] < hits[0]["score"] and any("amended by" in r for r in stale["reasons"])


def test_session_start_and_the_first_prompt_share_the_opening_budget(http):
    project, key = f"bud-{uuid.uuid4().hex[:6]}", f"sess-{uuid.uuid4().hex}"
    filler = " ".join(["the regional finance team reviews these totals every quarter"] * 6)
    memories = [{"content": f"Invoice rule {i}: region {i} rounds invoice totals half-even to cents; {filler}",
                 "project": project, "importance": 0.9, "applies": "project"} for i in range(40)]  # may open sessions
    assert http.post("/api/memory/batch", json={"memories": memories}).status_code == 200
    start = hook(http, "session-start", {"session_key": key, "project": project, "context": "invoices"})
    first = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "How are invoice totals rounded to cents?"})
    # session-start cannot know the task: a short opening (start_budget_chars 2000 + its frame) ...
    assert start["memory_ids"] and len(start["inject"]) <= 2000 + 400
    # ... and the first prompt, where the task is known, gets the rest of the 6000-character budget
    assert len(first["memory_ids"]) >= 5 and not set(first["memory_ids"]) & set(start["memory_ids"])
    assert len(start["inject"]) + len(first["inject"]) <= 8000


def test_related_remembers_never_supersede_each_other(http):
    project = f"cyc-{uuid.uuid4().hex[:6]}"
    first, second = http.post("/api/memory/batch", json={"memories": [
        {"content": "The nightly export cache is enabled for the reports service", "project": project},
        {"content": "The nightly export cache is disabled for the reports service", "project": project},
    ]}).json()["results"]
    for _ in range(600):  # the extraction worker runs both jobs
        jobs = http.get("/api/pipeline/jobs", params={"memory_id": second["id"]}).json()["items"]
        if jobs and jobs[0]["status"] in ("completed", "dead"):
            break
        time.sleep(0.2)
    for _ in range(600):
        jobs = http.get("/api/pipeline/jobs", params={"memory_id": first["id"]}).json()["items"]
        if jobs and jobs[0]["status"] in ("completed", "dead"):
            break
        time.sleep(0.2)
    old, new = (http.get(f"/api/memory/{m['id']}").json() for m in (first, second))
    assert new["superseded_by"] is None  # the newer statement stays
    assert old["superseded_by"] in (None, new["id"])  # the older may lose; never both
    hits = http.post("/api/memory/recall", json={"query": "nightly export cache reports", "project": project}).json()
    assert new["id"] in [h["id"] for h in hits["results"]]


def test_a_quote_of_an_injected_memory_stores_nothing_new(http):
    project = f"quote-{uuid.uuid4().hex[:6]}"
    rule = "Always run the schema migrations inside a transaction on the billing database"
    rule_id = http.post("/api/memory/remember", json={"content": rule, "project": project, "importance": 0.9,
                                                      "applies": "project"}).json()["id"]
    key = f"sess-{uuid.uuid4().hex}"
    start = hook(http, "session-start", {"session_key": key, "project": project})
    assert rule_id in start["memory_ids"]
    summary = end_session(http, key, (
        "User: add the invoice_total column\n"
        f"Assistant: As the stored rule [{rule_id}] says, always run the schema migrations inside a transaction "
        "on the billing database. Done: the column is added.\n"
        "User: Right. Always run schema migrations inside a transaction on the billing database.\n"
    ))  # the user's restatement is a claim (the assistant's "As the stored rule … says" is a quote, not one)
    assert summary["extraction"]["restatements"] >= 1 and summary["extraction"]["stored"] == []
    assert [m["type"] for m in session_memories(http, key)] == ["episode"]


def test_explicit_type_is_kept_and_own_decision_language_is_protected(http):
    def stored(body: dict) -> dict:
        response = http.post("/api/memory/remember", json=body)
        assert response.status_code == 200, response.text
        return http.get(f"/api/memory/{response.json()['id']}").json()

    text = f"We decided to use Redis for the session cache {uuid.uuid4().hex[:6]}"
    assert (stored({"content": text})["type"], stored({"content": text + " too"})["importance"]) == ("constraint", 0.85)
    explicit = stored({"content": text + " (explicit)", "type": "fact"})
    assert (explicit["type"], explicit["importance"]) == ("fact", 0.5)
    quoted = stored({"content": f'The old wiki said "we decided to use Memcached" {uuid.uuid4().hex[:6]}'})
    assert quoted["type"] == "fact" and quoted["importance"] == 0.5


def test_a_code_span_of_spaces_never_fails_a_write(http):
    response = http.post("/api/memory/remember", json={"content": "a blank line like `    ` breaks jsonl_parse"})
    assert response.status_code == 200, response.text
    assert http.get(f"/api/memory/{response.json()['id']}").json()["content"].startswith("a blank line like")


def test_sentences_keep_abbreviations_code_spans_and_list_items():
    from kenning.providers.offline_rules import split_sentences
    assert split_sentences("Freeze time, e.g. with freezegun. Then rerun it, i.e. twice. Compare A vs. B here.") == [
        "Freeze time, e.g. with freezegun.", "Then rerun it, i.e. twice.", "Compare A vs. B here."]
    assert split_sentences("Call `cfg.load. Then` first. Next step.") == ["Call `cfg.load. Then` first.", "Next step."]
    assert split_sentences("Rules:\n- Never log tokens. Always rotate keys.\n2. Pin deps") == [
        "Rules:", "Never log tokens.", "Always rotate keys.", "Pin deps"]


def test_a_derived_memory_and_its_source_take_one_slot(http):
    project = f"prov-{uuid.uuid4().hex[:6]}"
    source = http.post("/api/memory/remember", json={
        "content": "User: how should the quokka importer treat blank rows?\nAssistant: skip them, log a warning",
        "project": project, "type": "episode"}).json()["id"]
    derived = http.post("/api/memory/remember", json={
        "content": "The quokka importer skips blank rows with a warning", "project": project,
        "derived_from": [source]}).json()["id"]
    hits = http.post("/api/memory/recall", json={"query": "quokka importer blank rows", "project": project}).json()
    ids = [h["id"] for h in hits["results"]]
    assert ids.count(derived) == 1 and source not in ids
    assert next(h for h in hits["results"] if h["id"] == derived)["sources"] == [source]
