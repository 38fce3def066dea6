"""Promotion at session end and step injection, on a real Kenning (real SQLite, real model)."""

from __future__ import annotations

from kenning.core.events import SessionEnded
from kenning.core.types import MemoryDraft
from kenning.hookservice import tool_result_from_body
from kenning.store import sessions as session_store

CWD = "/work/shop"
ERR = ("FAILED tests/test_orders.py::test_total\nE   sqlalchemy.exc.OperationalError: no such column: "
       "orders.discount_cents")


def _post(k, key: str, tool: str, response=None, **tool_input) -> dict:
    return k.observer.post_tool_use(tool_result_from_body({  # a post-tool-use body, read as the route reads it
        "session_key": key, "tool_name": tool, "tool_input": tool_input, "tool_response": response, "cwd": CWD,
        "project": "shop"}))


def _error_session(k, key: str) -> None:
    _post(k, key, "Read", file_path=f"{CWD}/src/orders.py")
    _post(k, key, "Bash", {"stdout": "", "stderr": ERR, "exit_code": 1}, command="pytest tests/test_orders.py")
    _post(k, key, "Edit", file_path=f"{CWD}/migrations/0042_discount.py", old_string="a", new_string="b")
    _post(k, key, "Bash", {"stdout": "3 passed", "stderr": "", "exit_code": 0}, command="pytest tests/test_orders.py")


def _observer_memories(k, cls: str):
    memories, _ = k.list(limit=200)
    return [m for m in memories if m.source == "observer" and m.metadata.get("observer", {}).get("signal_class") == cls]


def test_error_pattern_promoted_after_min_sessions_then_reinforced_then_injected(kenning):
    k = kenning
    _error_session(k, "e1")
    first = k.observer.end_session("e1", wait=True)
    assert first["promoted"] == [] and first["signals"] >= 1  # error_retry needs 2 sessions
    _error_session(k, "e2")
    second = k.observer.end_session("e2", wait=True)
    [memory] = _observer_memories(k, "error_retry")
    assert memory.id in second["promoted"] and memory.type == "error_pattern"
    assert "migrations/0042_discount.py" in memory.content and "no such column" in memory.content
    assert set(memory.related_files) >= {"migrations/0042_discount.py", "tests/test_orders.py"}
    assert memory.metadata["supporting_sessions"] == ["e1", "e2"]
    assert memory.confidence >= 0.65 and not memory.needs_review

    _error_session(k, "e3")  # same error again: novelty ⇒ reinforce, no new memory
    third = k.observer.end_session("e3", wait=True)
    assert third["promoted"] == [] and memory.id in third["reinforced"]
    again = k.get(memory.id)
    assert again.confidence > memory.confidence and "e3" in again.metadata["supporting_sessions"]
    assert len(_observer_memories(k, "error_retry")) == 1

    # a fourth session: the decider tells the agent when it reads the file the error names
    answer = _post(k, "e4", "Read", file_path=f"{CWD}/tests/test_orders.py")
    assert answer["memory_ids"] == [memory.id] and "0042_discount" in answer["inject"]
    rows = {r["memory_id"]: r for r in session_store.session_memories(k.db.reader(), "e4")}
    assert rows[memory.id]["inject_phase"] == "step" and rows[memory.id]["was_injected"] == 1
    # not shown twice in one session; the same error then finds nothing new
    assert _post(k, "e4", "Read", file_path=f"{CWD}/tests/test_orders.py")["memory_ids"] == []
    # a new session hitting the error is shown the fix at the error step
    fresh = _post(k, "e5", "Bash", {"stderr": ERR.replace("discount_cents", "discount_cents"), "exit_code": 1},
                  command="pytest -x tests/test_orders.py")
    assert fresh["memory_ids"] == [memory.id] and "this error was seen before" in fresh["inject"]


def test_novelty_filter_reinforces_a_near_duplicate_memory(kenning):
    k = kenning
    existing = k.remember(MemoryDraft(
        content="Correction while working on `src/cache.py`: I was wrong about the cache key: it is built from "
                "the tenant id, not the user id (seen in 1 session).", type="gotcha", project="shop", confidence=0.7))
    _post(k, "n1", "Read", file_path=f"{CWD}/src/cache.py")
    k.observer.observe({"session_key": "n1", "type": "reasoning",
                        "text": "I was wrong about the cache key: it is built from the tenant id, not the user id."})
    result = k.observer.end_session("n1", wait=True)
    assert result["promoted"] == [] and result["reinforced"] == [existing.id]
    assert k.get(existing.id).confidence > 0.7


def test_trust_gate_flags_and_downweights_after_web_fetch(kenning):
    k = kenning
    _post(k, "t1", "Read", file_path=f"{CWD}/src/payments.py")
    _post(k, "t1", "WebFetch", "Stripe docs ...", url="https://stripe.com/docs/idempotency")
    k.observer.observe({"session_key": "t1", "type": "reasoning",
                        "text": "Correction: idempotency keys expire after 24 hours, so retries later create duplicates."})
    result = k.observer.end_session("t1", wait=True)
    [memory] = [k.get(i) for i in result["promoted"] if k.get(i).metadata["observer"]["signal_class"] == "self_correction"]
    assert memory.needs_review and memory.metadata["trust_flags"]["contaminated"] is True
    assert memory.confidence < 0.65  # 0.88 × 0.7: never step-injected until reviewed
    clean = [m for m in _observer_memories(k, "self_correction") if not m.needs_review]
    assert all(m.confidence >= 0.8 for m in clean)


def test_noise_session_promotes_nothing(kenning):
    k = kenning
    _post(k, "q1", "Read", file_path=f"{CWD}/README.md")
    _post(k, "q1", "Grep", "src/a.py", pattern="class Order")
    _post(k, "q1", "Edit", file_path=f"{CWD}/src/a.py", old_string="x", new_string="y")
    _post(k, "q1", "Bash", {"stdout": "5 passed", "exit_code": 0}, command="pytest")
    result = k.observer.end_session("q1", wait=True)
    assert result["promoted"] == [] and result["signals"] > 0


def test_search_answered_by_a_stored_memory(kenning):
    k = kenning
    for key in ("g1", "g2"):
        _post(k, key, "Grep", "", pattern="def apply_discount")
        _post(k, key, "Read", file_path=f"{CWD}/src/pricing/rules.py")
        _post(k, key, "Grep", "src/pricing/rules.py", pattern="def apply_discount")
        k.observer.end_session(key, wait=True)
    [memory] = _observer_memories(k, "repeated_grep")
    assert memory.type == "module_insight" and "src/pricing/rules.py" in memory.content
    answer = _post(k, "g3", "Grep", "", pattern="def apply_discount")
    assert answer["memory_ids"] == [memory.id] and "answers the search" in answer["inject"]


def test_co_access_synthesis_at_the_first_threshold(kenning):
    k = kenning
    k.settings.observer.synthesis_thresholds = [5]
    for i in range(5):
        key = f"c{i}"
        _post(k, key, "Edit", file_path=f"{CWD}/src/api/schema.py", old_string=f"a{i}", new_string=f"b{i}")
        _post(k, key, "Edit", file_path=f"{CWD}/web/src/types.ts", old_string=f"a{i}", new_string=f"b{i}")
        _post(k, key, "Edit", file_path=f"{CWD}/src/noise_{i}.py", old_string="a", new_string="b")
        result = k.observer.end_session(key, wait=True)
    assert result["synthesis"] == 5
    [memory] = _observer_memories(k, "co_access")
    assert memory.type == "causal_dependency"
    assert set(memory.related_files) == {"src/api/schema.py", "web/src/types.ts"}
    hint = _post(k, "c9", "Edit", file_path=f"{CWD}/web/src/types.ts", old_string="z", new_string="w")
    assert hint["memory_ids"] == [memory.id]


def test_reasoning_is_read_from_the_transcript_when_the_harness_streams_none(kenning):
    import json

    k = kenning
    _post(k, "tr1", "Read", file_path=f"{CWD}/src/search/index.py")
    _post(k, "tr1", "Edit", file_path=f"{CWD}/src/search/index.py", old_string="a", new_string="b")
    lines = [
        {"type": "user", "message": {"role": "user", "content": "make search faster"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "name": "Edit", "input": {"file_path": f"{CWD}/src/search/index.py"}}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Caching the index in a module global breaks the worker processes. "
                                     "This approach won't work with forked workers."}]}},
    ]
    k.sessions.session_end(SessionEnded(session_key="tr1", transcript="\n".join(json.dumps(x) for x in lines)))
    result = k.observer.end_session("tr1", wait=True)
    [memory] = [k.get(i) for i in result["promoted"] if k.get(i).type == "dead_end"]
    assert memory.related_files == ["src/search/index.py"] and "forked workers" in memory.content
