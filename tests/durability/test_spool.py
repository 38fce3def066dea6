"""The hook spool's own rules (issue 26): 0600 files, caps that drop the oldest with a counted
reason, replay oldest first, exactly once, claims that survive a crashed replayer."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from kenning.core import spool
from kenning.hooks.spool import spool_request


def _event(home: Path, n: int, **limits) -> dict:
    return spool_request("/api/hooks/user-prompt-submit", {"session_key": f"s{n}", "prompt": f"p{n}",
                                                           "transcript": "never spooled"},
                         transcript_path=f"/t/{n}.jsonl", harness="claude-code",
                         environ={"KENNING_HOME": str(home), **limits})


def test_an_event_is_spooled_0600_without_its_transcript(tmp_path):
    result = _event(tmp_path, 1)
    assert result["spooled"]
    folder = tmp_path / "spool"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (file,) = folder.glob("e-*.json")
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    record = json.loads(file.read_text())
    assert record["body"] == {"session_key": "s1", "prompt": "p1"} and record["transcript_path"] == "/t/1.jsonl"
    assert "never spooled" not in file.read_text()
    info = spool.stats(str(tmp_path))
    assert info["depth"] == 1 and info["oldest_at"] and info["dropped"] == 0


def test_at_its_cap_the_oldest_are_dropped_and_counted(tmp_path):
    for n in range(7):
        _event(tmp_path, n, KENNING_SPOOL_MAX_EVENTS="5")
    info = spool.stats(str(tmp_path))
    assert info["depth"] == 5 and info["dropped"] == 2 and info["drop_reasons"] == {"cap": 2}
    seen = []
    spool.replay(str(tmp_path), lambda r: seen.append(r["body"]["session_key"]) or "done")
    assert seen == ["s2", "s3", "s4", "s5", "s6"]
    log = (tmp_path / "spool" / "dropped.log").read_text().splitlines()
    assert [json.loads(line)["session_key"] for line in log] == ["s0", "s1"]


def test_byte_and_age_caps(tmp_path):
    for n in range(4):
        _event(tmp_path, n, KENNING_SPOOL_MAX_BYTES="600")
    info = spool.stats(str(tmp_path))
    assert info["bytes"] <= 600 and info["dropped"] == 4 - info["depth"] and info["dropped"] >= 1
    old = tmp_path / "old"
    _event(old, 1)
    assert spool.enforce(str(old), spool.Limits(max_age_s=1), now=time.time() + 5) == 1
    assert spool.stats(str(old))["drop_reasons"] == {"age": 1}


def test_replay_is_once_and_retry_keeps_the_event(tmp_path):
    for n in range(3):
        _event(tmp_path, n)
    assert spool.replay(str(tmp_path), lambda r: "retry")["retry"] == 1
    assert spool.stats(str(tmp_path))["depth"] == 3
    handled = []
    counts = spool.replay(str(tmp_path), lambda r: handled.append(r["body"]["session_key"]) or "done")
    assert counts["done"] == 3 and handled == ["s0", "s1", "s2"]
    assert spool.replay(str(tmp_path), lambda r: handled.append("again") or "done")["done"] == 0
    assert handled == ["s0", "s1", "s2"] and spool.stats(str(tmp_path))["depth"] == 0


def test_a_crashed_replayers_claim_is_released_later(tmp_path):
    _event(tmp_path, 1)
    folder = tmp_path / "spool"
    (name,) = os.listdir(folder)
    os.rename(folder / name, folder / ("c-" + name[2:]))  # claimed by a replayer that died
    assert spool.replay(str(tmp_path), lambda r: "done")["done"] == 0  # a fresh claim is left alone
    old = time.time() - spool.STALE_CLAIM_S - 5
    os.utime(folder / ("c-" + name[2:]), (old, old))
    assert spool.replay(str(tmp_path), lambda r: "done")["done"] == 1


def test_an_unwritable_home_never_raises(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert _event(blocked, 1)["spooled"] is False


def test_the_drop_log_is_folded_and_keeps_exact_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(spool, "MAX_DROPPED_LOG_BYTES", 600)
    for n in range(12):
        _event(tmp_path, n, KENNING_SPOOL_MAX_EVENTS="1")
    log = tmp_path / "spool" / "dropped.log"
    assert log.stat().st_size <= 600 + 300
    info = spool.stats(str(tmp_path))
    assert info["dropped"] == 11 and info["drop_reasons"] == {"cap": 11} and info["depth"] == 1
