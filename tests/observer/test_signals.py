"""Each signal of the taxonomy from a minimal event sequence, on the real scratchpad (no database)."""

from __future__ import annotations

import json

from kenning.observer.scratchpad import Scratchpad
from kenning.observer.signals import TAXONOMY, error_fingerprint, normalize_error

CWD = "/work/app"


def _pad() -> Scratchpad:
    return Scratchpad("s1", project="app", cwd=CWD)


def _tool(pad: Scratchpad, tool: str, result: str = "", error: bool = False, **args):
    ctx = pad.on_tool_call(tool, args)
    return pad.on_tool_result(tool, args, result, error, ctx)


def _signals(pad: Scratchpad, cls: str):
    return [s for s in pad.finalize() if s.signal_class == cls]


def test_taxonomy_has_the_seed_classes_with_scores_min_sessions_and_types():
    assert TAXONOMY["co_access"].score == 0.91 and TAXONOMY["co_access"].min_sessions == 3
    assert TAXONOMY["error_retry"].promotes_to[0] == "error_pattern" and TAXONOMY["error_retry"].min_sessions == 2
    assert TAXONOMY["self_correction"].min_sessions == 1
    assert {"gotcha", "error_pattern", "dead_end", "prefetch_pattern", "causal_dependency", "workflow_recipe",
            "module_insight"} <= {t for c in TAXONOMY.values() for t in c.promotes_to}


def test_error_fingerprint_strips_paths_numbers_ids_and_hex():
    a = "Traceback (most recent call last):\n  File \"/work/app/src/db.py\", line 12\nKeyError: 'user_1842' at 0x7f3a9c2e10"
    b = "Traceback (most recent call last):\n  File \"/other/src/db.py\", line 99\nKeyError: 'user_77' at 0x55aa00bb11"
    assert error_fingerprint(a) == error_fingerprint(b)
    assert normalize_error(a) == "keyerror: 'user_<n>' at <hex>"
    assert error_fingerprint(a) != error_fingerprint("ImportError: cannot import name 'x' from 'y'")


def test_error_retry_records_the_error_and_the_fix_that_followed():
    pad = _pad()
    err = "FAILED tests/test_db.py::test_save\nE   sqlite3.OperationalError: no such column: users.email"
    _tool(pad, "Bash", err, True, command="pytest tests/test_db.py")
    _tool(pad, "Edit", file_path=f"{CWD}/src/migrations.py", old_string="a", new_string="b")
    _tool(pad, "Bash", "1 passed", False, command="pytest tests/test_db.py")
    [signal] = _signals(pad, "error_retry")
    assert signal.key == error_fingerprint(err)
    assert signal.detail["fix_files"] == ["src/migrations.py"] and signal.detail["resolved"] is True
    assert "tests/test_db.py" in signal.files


def test_self_correction_and_dead_end_language_in_reasoning():
    pad = _pad()
    _tool(pad, "Read", file_path=f"{CWD}/src/cache.py")
    pad.on_reasoning("I was wrong about the cache key. It is actually built from the tenant id.")
    _tool(pad, "Edit", file_path=f"{CWD}/src/cache.py", old_string="x", new_string="y")
    pad.on_reasoning("Mocking redis here fails. This approach won't work because redis is unavailable in CI.")
    [correction] = _signals(pad, "self_correction")
    assert correction.files == ["src/cache.py"]
    [ended] = _signals(pad, "dead_end")
    assert ended.files == ["src/cache.py"] and "won't work" in ended.detail["sentence"]
    pad.on_reasoning("Running the tests now.")
    assert len(_signals(pad, "self_correction")) == 1


def test_backtrack_is_a_revert_within_twenty_steps():
    pad = _pad()
    _tool(pad, "Edit", file_path=f"{CWD}/src/a.py", old_string="retry=3", new_string="retry=5")
    _tool(pad, "Bash", "ok", command="make test")
    _tool(pad, "Edit", file_path=f"{CWD}/src/a.py", old_string="retry=5", new_string="retry=3")
    assert [s.key for s in _signals(pad, "backtrack")] == ["src/a.py"]
    assert all("src/a.py" not in s.files for s in _signals(pad, "co_access"))  # a reverted edit is no change
    other = _pad()
    _tool(other, "Edit", file_path=f"{CWD}/src/a.py", old_string="a", new_string="b")
    _tool(other, "Edit", file_path=f"{CWD}/src/a.py", old_string="c", new_string="d")
    assert _signals(other, "backtrack") == []


def test_read_abandon_repeated_grep_and_glob_ignore():
    pad = _pad()
    for _ in range(3):
        _tool(pad, "Read", file_path=f"{CWD}/src/settings.py")
    _tool(pad, "Grep", pattern="def load_config")
    _tool(pad, "Read", file_path=f"{CWD}/src/config/loader.py")
    _tool(pad, "Grep", pattern="def load_config")
    _tool(pad, "Glob", "\n".join(f"{CWD}/src/m{i}.py" for i in range(20)), pattern="src/**/*.py")
    assert [s.key for s in _signals(pad, "read_abandon")] == ["src/settings.py"]
    [grep] = [s for s in _signals(pad, "repeated_grep") if s.key == "def load_config"]
    assert grep.files == ["src/config/loader.py"] and grep.detail["count"] == 2
    [glob] = _signals(pad, "glob_ignore")
    assert glob.detail == {"pattern": "src/**/*.py", "results": 20, "read": 0}


def test_config_touch_co_access_file_access_external_reference_and_sequence():
    pad = _pad()
    _tool(pad, "WebFetch", url="https://docs.example.com/api/v2")
    for name in ("pyproject.toml", "src/a.py", "src/b.py"):
        _tool(pad, "Edit", file_path=f"{CWD}/{name}", old_string="1", new_string="2")
    for _ in range(3):
        for cmd in ("make lint", "make test", "make docs"):
            _tool(pad, "Bash", "ok", command=cmd)
    assert [s.key for s in _signals(pad, "config_touch")] == ["pyproject.toml"]
    assert {s.key for s in _signals(pad, "co_access")} == {"pyproject.toml|src/a.py", "pyproject.toml|src/b.py",
                                                          "src/a.py|src/b.py"}
    assert {s.key for s in _signals(pad, "file_access")} == {"pyproject.toml", "src/a.py", "src/b.py"}
    [ext] = _signals(pad, "external_reference")
    assert ext.contaminated and ext.files[0] == "pyproject.toml"
    assert any(s.key.count("Bash:make") == 4 for s in _signals(pad, "tool_sequence"))
    loop = _pad()  # the plain edit-test loop is not a recipe
    for _ in range(4):
        _tool(loop, "Edit", file_path=f"{CWD}/src/a.py", old_string="1", new_string="2")
        _tool(loop, "Bash", "ok", command="pytest")
    assert _signals(loop, "tool_sequence") == []


def test_signals_after_a_web_fetch_are_tainted():
    pad = _pad()
    _tool(pad, "Read", file_path=f"{CWD}/src/a.py")
    pad.on_reasoning("Correction: the retry budget is per request.")
    _tool(pad, "WebSearch", query="retry budget semantics")
    pad.on_reasoning("I initially thought the budget was global but it is per tenant.")
    flags = [s.contaminated for s in _signals(pad, "self_correction")]
    assert flags == [False, True]


def test_unknown_tools_are_counted_without_signals():
    pad = _pad()
    _tool(pad, "mcp__db__query", "rows: 3", sql="select 1")
    _tool(pad, "unknown")
    assert pad.step == 2 and pad.tool_calls == 2 and pad.finalize() == []


def test_checkpoint_state_round_trips_through_json():
    pad = _pad()
    _tool(pad, "Grep", pattern="TODO")
    _tool(pad, "Bash", "Error: boom", True, command="npm test")
    pad.on_reasoning("Correction: boom comes from the fixture.")
    state = json.loads(json.dumps(pad.to_state()))
    back = Scratchpad.from_state("s1", state)
    assert back.step == pad.step and back.greps == pad.greps and back.open_errors == pad.open_errors
    assert [s.key for s in back.finalize()] == [s.key for s in pad.finalize()]


def test_scratchpad_memory_is_bounded():
    pad = Scratchpad("s1", cwd=CWD, caps={"files": 50, "patterns": 20, "errors": 10, "signals": 5})
    for i in range(500):
        _tool(pad, "Read", file_path=f"{CWD}/f{i}.py")
        _tool(pad, "Grep", pattern=f"p{i}")
        _tool(pad, "Bash", f"ValueError: bad {i} in thing{i % 50}x", True, command=f"run{i}")
        pad.on_reasoning(f"Correction: item {i} differs.")
    assert len(pad.files) <= 50 and len(pad.greps) <= 20 and len(pad.open_errors) <= 10
    assert len(pad.signals["self_correction"]) <= 5 and len(pad.sequences) <= 20
    assert len(json.dumps(pad.to_state())) < 200_000
