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

Phase 2 (`missed_session_ends`, issue 26; `--sessions N`, `--sessions-only`): N Claude Code
2.1.328-format sessions run through the real hook processes with their transcripts under
`~/.claude/projects`, and the daemon is SIGKILLed around each end, in turn: before SessionEnd
(the hook finds no daemon and spools it), 0.3 s after SessionEnd answered (mid summary), or
with no SessionEnd at all (the machine went down; `sessions.stale_after_minutes: 0`). After the
next session's first hook, `sessions_lost` (must be 0) counts the sessions not ended with their
transcript, episodes and summary within `--sessions-wait-s`. `--src CHECKOUT` runs that phase's
daemon and hooks from another source tree, for the before measurement:

    git worktree add --detach /tmp/kenning-before <commit>
    .venv/bin/python bench/durability.py --sessions-only --sessions 6 --src /tmp/kenning-before
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harnesses.daemon import DaemonProcess, free_port, start_daemon  # noqa: E402  (the one daemon starter)


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
    daemon = start_daemon(home, config, log_name="daemon.log", timeout_s=240)
    target.url = daemon.base_url
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
            daemon.kill()  # (waits until it is gone)
            restarts.append(round(daemon.restart(timeout_s=240), 2))  # same home, same port
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


# -- phase 2: sessions whose end the daemon missed (issue 26) ------------------------------------------
SESSION_MODES = ("down_at_end", "killed_after_end", "no_end_hook")
SESSION_TOPICS = [  # one distinct conversation per session (near-duplicates would be deduplicated)
    [("Where do we deploy the billing service?", "We decided to deploy billing with helm only."),
     ("And pull requests?", "From now on we always squash merge pull requests into main.")],
    [("Which database does search use?", "Search moved to PostgreSQL full-text; Elasticsearch is retired."),
     ("How are migrations run?", "Alembic migrations run in CI before every release, never by hand.")],
    [("Why did the auth tests flake?", "The token clock skew: tests now freeze time with freezegun."),
     ("Any rule for secrets?", "Secrets live in Vault; nothing goes into .env files in the repo.")],
    [("How do payments retry?", "Stripe webhooks are retried three times with exponential backoff."),
     ("Where are the logs?", "Payment logs ship to Loki with a 30 day retention.")],
    [("What about notifications?", "Push notifications go through Firebase; SMS through Twilio only."),
     ("Rate limits?", "Each user gets at most five notifications per hour.")],
    [("How are reports built?", "Monthly reports are rendered by a nightly Airflow DAG into S3."),
     ("Who owns them?", "The data team owns reports; page them in #data-oncall.")],
]


def _hook(event: str, body: dict, env: dict[str, str]) -> float:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "kenning.hooks", event], input=json.dumps(body).encode(),
                            capture_output=True, env=env, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"hook {event} exited {result.returncode}: {result.stderr[-500:]!r}")
    return time.monotonic() - started


def _recorded(url: str, key: str) -> bool:
    """The session is ended with its transcript, its episodes and its summary done."""
    try:
        r = httpx.get(f"{url}/api/sessions/{key}", timeout=30)
    except httpx.HTTPError:
        return False
    if r.status_code != 200:
        return False
    data = r.json()
    return (data["session"]["status"] == "ended" and bool(data.get("transcript"))
            and any(m.get("source") == "session-episode" for m in data.get("created", []))
            and (data.get("summary_job") or {}).get("status") == "done")


def run_sessions(n: int, src: Path | None, wait_s: float) -> dict:
    """Real-format Claude Code sessions (hook processes, transcripts under ~/.claude/projects) while
    the daemon is killed around their ends, cycling SESSION_MODES: SIGKILL before SessionEnd (the
    hook finds no daemon), SIGKILL 0.3 s after SessionEnd answered (mid summary), SIGKILL and no
    SessionEnd at all (the machine went down). Then one more session starts (the next hook) and
    each session is `lost` unless it ends with transcript, episodes and summary within `wait_s`.
    `src` runs daemon and hooks from another source tree (the before measurement)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.harnesses.claude_format import payload, write_session

    base = Path(tempfile.mkdtemp(prefix="kenning-durability-sessions-"))
    home, user, repo = base / "home", base / "user", base / "billing"
    home.mkdir()
    (user / ".claude" / "projects").mkdir(parents=True)
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    tree = (src or Path(__file__).resolve().parent.parent) / "src"
    stale_setting = "stale_after_minutes" in (tree / "kenning" / "core" / "config_sessions.py").read_text()
    (home / "config.yaml").write_text("sessions:\n  latency_budget_ms: 20000\n"
                                      + ("  stale_after_minutes: 0\n" if stale_setting else "")
                                      + "pipeline:\n  worker:\n    lease_timeout_ms: 15000\n")
    started = time.monotonic()  # one port across restarts: the hooks find the daemon where they did
    daemon: DaemonProcess = start_daemon(home, extra_env={"HOME": str(user), "KENNING_HOOK_TIMEOUT": "3"},
                                         log_name="daemon.log", timeout_s=240, port=free_port(),
                                         src=tree if src is not None else None)
    env = daemon.env  # the hooks run with the daemon's environment (its home, port, HOME, source tree)
    restarts = [round(time.monotonic() - started, 2)]
    sessions: list[dict] = []
    hook_s: list[float] = []
    try:
        for i in range(n):
            mode = SESSION_MODES[i % len(SESSION_MODES)]
            key = str(uuid.uuid4())
            turns = SESSION_TOPICS[i % len(SESSION_TOPICS)]
            transcript = str(write_session(user / ".claude" / "projects", str(repo), key, turns))
            hook_s.append(_hook("session-start", payload("session-start", key, str(repo), transcript), env))
            for prompt, _ in turns:
                hook_s.append(_hook("user-prompt-submit", payload("user-prompt-submit", key, str(repo), transcript,
                                                                   prompt=prompt), env))
            end = payload("session-end", key, str(repo), transcript)
            if mode == "down_at_end":
                daemon.kill()
                hook_s.append(_hook("session-end", end, env))
            elif mode == "killed_after_end":
                hook_s.append(_hook("session-end", end, env))
                time.sleep(0.3)
                daemon.kill()
            else:
                daemon.kill()
            restarts.append(round(daemon.restart(timeout_s=240), 2))
            sessions.append({"key": key, "mode": mode})
        nxt = str(uuid.uuid4())  # the next session's first hook reaches the daemon
        _hook("session-start", payload("session-start", nxt, str(repo), ""), env)
        started = time.monotonic()
        pending = {s["key"] for s in sessions}
        while pending and time.monotonic() - started < wait_s:
            for key in list(pending):
                if _recorded(daemon.base_url, key):
                    pending.discard(key)
                    next(s for s in sessions if s["key"] == key)["recovered_after_s"] = round(
                        time.monotonic() - started, 1)
            time.sleep(1)
        for s in sessions:
            s["lost"] = s["key"] in pending
    finally:
        daemon.stop()
    by_mode = {m: {"sessions": sum(s["mode"] == m for s in sessions),
                   "lost": sum(s["mode"] == m and s["lost"] for s in sessions)} for m in SESSION_MODES}
    return {"sessions": len(sessions), "sessions_lost": sum(s["lost"] for s in sessions), "by_mode": by_mode,
            "wait_s": wait_s, "source_tree": str(tree), "stale_after_minutes": 0 if stale_setting else None,
            "hook_max_s": round(max(hook_s), 2) if hook_s else None, "restart_s": restarts,
            "detail": sessions, "home": str(home)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--phase-s", type=float, default=20.0, help="seconds of load before each kill")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--sessions", type=int, default=6,
                        help="real-format sessions whose ends the daemon misses (phase 2; 0: skip it)")
    parser.add_argument("--sessions-only", action="store_true", help="run phase 2 only")
    parser.add_argument("--sessions-wait-s", type=float, default=120.0,
                        help="how long the sessions may take to be recovered after the next hook")
    parser.add_argument("--src", type=Path, help="run phase 2's daemon and hooks from this source tree "
                        "(a checkout of an earlier commit: the before measurement)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = {"bench": "durability", "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}}
    ok = True
    if not args.sessions_only:
        report.update(run(args.threads, args.kills, args.phase_s, args.seed))
        ok = (report["acknowledged_missing"] == 0 and report["integrity_check"] == "ok"
              and report["fts_integrity"] == "ok" and report["server_errors"] == 0)
    if args.sessions:
        report["missed_session_ends"] = run_sessions(args.sessions, args.src, args.sessions_wait_s)
        ok = ok and report["missed_session_ends"]["sessions_lost"] == 0
    report["ok"] = ok
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    sys.exit(0 if report["ok"] else 1)


if __name__ == "__main__":
    main()
