"""Durability under `kill -9`: acknowledged writes lost across daemon kills under load, JSON out.

    .venv/bin/python bench/durability.py --out /tmp/durability.json
    .venv/bin/python bench/durability.py --threads 8 --kills 3 --phase-s 15

A real daemon (`python -m kenning serve`, temp home) takes writes from `--threads` threads over
HTTP, mixing POST /api/memory/remember (70 %), POST /api/memory/batch of 4 (20 %) and
DELETE /api/memory/{id} of one of the thread's own acknowledged memories (10 %). Every
`--phase-s` seconds the daemon is SIGKILLed in the middle of that load and restarted on the same
home; the writers retry against the new daemon. A write counts as acknowledged only when its
HTTP 200 arrived. After the last restart the load stops, the daemon is stopped cleanly and the
database is opened directly:
- `acknowledged_missing` (must be 0): acknowledged memories that are not in the store, plus
  acknowledged forgets that are not tombstoned;
- `unacknowledged_present`: writes whose answer was cut by a kill but which did commit (fine);
- `integrity_check` (PRAGMA integrity_check) and `fts_integrity` (FTS5 'integrity-check' on
  memories_fts) must both be "ok";
- `server_errors`: 5xx answers (must be 0), `locked`: answers mentioning a locked database.
`phases` gives the answered writes/s of each phase; phase 0 (before any kill) is the baseline
of the same run, and `restart_s` how long each restart took.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from predictor_sim import Daemon  # noqa: E402  (real `python -m kenning serve`, temp home, free port)


@dataclass
class Ledger:
    """What each writer sent and what was acknowledged (ids by content token)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: dict[str, str] = field(default_factory=dict)  # memory id -> content token
    attempted_tokens: set[str] = field(default_factory=set)
    acked_forgets: set[str] = field(default_factory=set)
    statuses: Counter = field(default_factory=Counter)
    locked: int = 0
    cut: int = 0  # requests whose answer never came (the daemon died under them)


class Target:
    """The current daemon's URL; writers wait on `up` while it restarts."""

    def __init__(self) -> None:
        self.url = ""
        self.up = threading.Event()


def _writer(n: int, target: Target, ledger: Ledger, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed + n)
    mine: list[str] = []
    client = httpx.Client(timeout=30)
    while not stop.is_set():
        if not target.up.wait(0.5):
            continue
        url = target.url
        roll = rng.random()
        try:
            if roll < 0.1 and mine:
                victim = mine.pop(rng.randrange(len(mine)))
                r = client.delete(f"{url}/api/memory/{victim}")
                kind, payload = "forget", victim
            else:
                count = 4 if roll < 0.3 else 1
                tokens = [f"dur{uuid.uuid4().hex}" for _ in range(count)]
                with ledger.lock:
                    ledger.attempted_tokens.update(tokens)
                bodies = [{"content": f"writer {n} durable note {t} about service {rng.randrange(50)}",
                           "project": "durability"} for t in tokens]
                if count == 1:
                    r = client.post(f"{url}/api/memory/remember", json=bodies[0])
                else:
                    r = client.post(f"{url}/api/memory/batch", json={"memories": bodies})
                kind, payload = "write", tokens
        except httpx.HTTPError:
            with ledger.lock:
                ledger.cut += 1
            time.sleep(0.05)
            continue
        with ledger.lock:
            ledger.statuses[r.status_code] += 1
            ledger.locked += "locked" in r.text.lower()
            if r.status_code != 200:
                continue
            if kind == "forget":
                ledger.acked_forgets.add(payload)
                continue
            results = [r.json()] if len(payload) == 1 else r.json()["results"]
            for token, res in zip(payload, results):
                ledger.acked[res["id"]] = token
                mine.append(res["id"])
    client.close()


def _verify(db_path: Path, ledger: Ledger) -> dict:
    import sqlean

    conn = sqlean.connect(str(db_path))
    try:
        rows = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, content, is_deleted FROM memories")}
        missing = [mid for mid, token in ledger.acked.items() if mid not in rows or token not in rows[mid][0]]
        not_forgotten = [mid for mid in ledger.acked_forgets if mid not in rows or not rows[mid][1]]
        stored_tokens = {c.split(" ")[4] for c, _ in rows.values() if c.startswith("writer ")}
        acked_tokens = set(ledger.acked.values())
        unacked_present = len((stored_tokens - acked_tokens) & ledger.attempted_tokens)
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        try:
            conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
            fts = "ok"
        except sqlean.Error as exc:
            fts = str(exc)
        return {"stored_memories": len(rows), "acknowledged_missing": len(missing) + len(not_forgotten),
                "missing_examples": (missing + not_forgotten)[:5], "unacknowledged_present": unacked_present,
                "integrity_check": "ok" if integrity == ["ok"] else integrity[:5], "fts_integrity": fts}
    finally:
        conn.close()


def run(threads: int, kills: int, phase_s: float, seed: int) -> dict:
    home = Path(tempfile.mkdtemp(prefix="kenning-durability-")) / "home"
    config = ""  # defaults: extraction and the other workers run, as for a user
    target, ledger, stop = Target(), Ledger(), threading.Event()
    daemon = Daemon(home, config)
    target.url = daemon.url
    target.up.set()
    workers = [threading.Thread(target=_writer, args=(n, target, ledger, stop, seed), daemon=True)
               for n in range(threads)]
    for w in workers:
        w.start()
    phases, restarts = [], []
    try:
        for phase in range(kills + 1):
            before = sum(ledger.statuses.values())
            time.sleep(phase_s)
            answered = sum(ledger.statuses.values()) - before
            phases.append({"phase": phase, "answered": answered, "writes_per_s": round(answered / phase_s, 1)})
            if phase == kills:
                break
            daemon.proc.send_signal(signal.SIGKILL)  # mid-load, no warning
            target.up.clear()
            daemon.proc.wait()
            daemon.log.close()
            started = time.monotonic()
            daemon = Daemon(home, config)
            restarts.append(round(time.monotonic() - started, 2))
            target.url = daemon.url
            target.up.set()
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=60)
        daemon.stop()
    result = _verify(home / "memories.db", ledger)
    return {
        "threads": threads, "kills": kills, "phase_s": phase_s,
        "acknowledged_writes": len(ledger.acked), "acknowledged_forgets": len(ledger.acked_forgets),
        "attempted_writes": len(ledger.attempted_tokens), "cut_by_kill": ledger.cut,
        "status_counts": {str(k): v for k, v in sorted(ledger.statuses.items())},
        "server_errors": sum(v for k, v in ledger.statuses.items() if k >= 500), "locked": ledger.locked,
        "restart_s": restarts, "phases": phases, **result, "home": str(home),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--phase-s", type=float, default=20.0, help="seconds of load before each kill")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = {"bench": "durability", "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
              **run(args.threads, args.kills, args.phase_s, args.seed)}
    report["ok"] = (report["acknowledged_missing"] == 0 and report["integrity_check"] == "ok"
                    and report["fts_integrity"] == "ok" and report["server_errors"] == 0)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    sys.exit(0 if report["ok"] else 1)


if __name__ == "__main__":
    main()
