"""The hook spool: events a hook could not deliver, kept until the daemon takes them (issue 26).

When a hook cannot reach the daemon within its deadline it appends the event — the request it
would have sent, with the transcript's *path* in place of the transcript — to
`$KENNING_HOME/spool/` (folder 0700, one file per event, 0600, written to a temporary name and
renamed, so a reader never sees half an event and no writer ever waits on a lock). The daemon
replays the spool at start and whenever a hook reaches it again (`replay`): each event is
claimed by an atomic rename, handled, then deleted, oldest first.

Bounded: at most `max_events` events, `max_bytes` bytes, none older than `max_age_s`. Past a
cap the oldest events are dropped, and each drop is counted (a line in `dropped.log`: when,
why, which session and event, never the payload; folded into one counting line past 256 KiB),
which `stats` reports and the daemon logs as a warning. Standard library only: hooks import this
(the secret scanner loads when an event is spooled: a spooled event is redacted first).
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # hooks import this module: typing stays unloaded at run time
    from collections.abc import Callable, Mapping
    from typing import TypedDict

    class Spooled(TypedDict):
        """What `append` did: whether the event is waiting in the spool, how many it dropped, its name."""

        spooled: bool
        dropped: int
        name: str | None

    class DropInfo(TypedDict):
        """The drop log read back: how many events were dropped, the last drop, the count per reason."""

        dropped: int
        last_dropped_at: str | None
        drop_reasons: dict[str, int]

    class SpoolStats(DropInfo):
        """What doctor and health show of the spool (`held`: events set aside, see `replay`)."""

        depth: int
        bytes: int
        oldest_at: str | None
        held: int


VERSION = 1
DIRNAME = "spool"
DROPPED_LOG = "dropped.log"
MAX_EVENTS = 1000
MAX_BYTES = 8 * 1024 * 1024
MAX_AGE_S = 7 * 24 * 3600.0
MAX_RECORD_BYTES = 512 * 1024
STALE_CLAIM_S = 600.0
MAX_DROPPED_LOG_BYTES = 256 * 1024  # past this the drop log is folded into one counting line
_PENDING, _CLAIMED = "e-", "c-"
HELD_DIR = "held"  # spool/held/: events a daemon refused with 5xx FAILED_TRIES times, kept aside (issue 33)
FAILED_TRIES = 3


class Limits:
    """The spool's caps (env KENNING_SPOOL_MAX_EVENTS / _MAX_BYTES / _MAX_AGE_S override them)."""

    __slots__ = ("max_events", "max_bytes", "max_age_s")

    def __init__(self, max_events: int = MAX_EVENTS, max_bytes: int = MAX_BYTES, max_age_s: float = MAX_AGE_S) -> None:
        self.max_events, self.max_bytes, self.max_age_s = max_events, max_bytes, max_age_s

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        env = os.environ if environ is None else environ
        limits = cls()
        for name, attr, kind in (("EVENTS", "max_events", int), ("BYTES", "max_bytes", int),
                                 ("AGE_S", "max_age_s", float)):
            raw = env.get(f"KENNING_SPOOL_MAX_{name}")
            try:
                if raw and kind(raw) > 0:
                    setattr(limits, attr, kind(raw))
            except ValueError:
                pass
        return limits


def spool_dir(home: str) -> str:
    return os.path.join(home, DIRNAME)


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def _born(name: str) -> float:
    """The epoch an event file was spooled at (from its name: e-<ns>-…)."""
    try:
        return int(name[2:].split("-", 1)[0]) / 1e9
    except ValueError:
        return 0.0


def _pending(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.startswith(_PENDING) and n.endswith(".json"))
    except OSError:
        return []


def _note_drop(folder: str, name: str, reason: str, record: Mapping[str, object] | None = None) -> None:
    entry: dict[str, str | None] = {"at": _iso(time.time()), "reason": reason, "spooled_at": _iso(_born(name))}
    if record is None:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            record = None
    if isinstance(record, dict):
        body = record.get("body")
        path, key = record.get("path"), body.get("session_key") if isinstance(body, dict) else None
        entry.update(path=path if isinstance(path, str) else None, session_key=key if isinstance(key, str) else None)
    log = os.path.join(folder, DROPPED_LOG)
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (json.dumps(entry) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        if os.stat(log).st_size > MAX_DROPPED_LOG_BYTES:
            _compact_dropped(log)
    except OSError:
        pass


def _compact_dropped(log: str) -> None:
    """Fold the drop log into one counting line (it stays small; the counts stay exact)."""
    info = _read_dropped(log)
    tmp = log + f".{os.getpid()}.tmp"
    line = {"at": info["last_dropped_at"], "count": info["dropped"], "reasons": info["drop_reasons"]}
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (json.dumps(line) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    os.rename(tmp, log)


def _read_dropped(log: str) -> DropInfo:
    dropped, last = 0, None
    reasons: dict[str, int] = {}
    try:
        with open(log, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                last = entry.get("at", last)
                if isinstance(entry.get("count"), int):  # a compacted line
                    dropped += entry["count"]
                    for reason, n in (entry.get("reasons") or {}).items():
                        reasons[reason] = reasons.get(reason, 0) + n
                    continue
                dropped += 1
                reasons[entry.get("reason")] = reasons.get(entry.get("reason"), 0) + 1
    except OSError:
        pass
    return {"dropped": dropped, "last_dropped_at": last, "drop_reasons": reasons}


def _drop(folder: str, name: str, reason: str) -> bool:
    _note_drop(folder, name, reason)
    try:
        os.unlink(os.path.join(folder, name))
        return True
    except OSError:
        return False


def enforce(home: str, limits: Limits | None = None, *, now: float | None = None) -> int:
    """Drop the oldest events past any cap (age first, then count and bytes); returns how many."""
    limits = limits or Limits.from_env()
    folder = spool_dir(home)
    now = time.time() if now is None else now
    dropped = 0
    names = _pending(folder)
    sizes: dict[str, int] = {}
    for name in names:
        try:
            sizes[name] = os.stat(os.path.join(folder, name)).st_size
        except OSError:
            sizes[name] = 0
    kept = []
    for name in names:
        if now - _born(name) > limits.max_age_s:
            dropped += _drop(folder, name, "age")
        else:
            kept.append(name)
    total = sum(sizes[n] for n in kept)
    while kept and (len(kept) > limits.max_events or total > limits.max_bytes):
        name = kept.pop(0)
        total -= sizes[name]
        dropped += _drop(folder, name, "cap")
    return dropped


def append(home: str, record: Mapping[str, object], limits: Limits | None = None) -> Spooled:
    """Spool one event (a JSON-able dict: path, body, transcript_path, …); never raises, never
    waits on another writer. Returns {spooled, dropped, name}. Every string in it is redacted
    first (core.secrets: a prompt or a tool's output never waits on disk with a credential in it,
    issue 33); the scanner loads only here, when an event is spooled."""
    try:
        from kenning.core.secrets import protect_value  # only when an event is spooled

        record = protect_value(dict(record), "redact")
        folder = spool_dir(home)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        now = time.time()
        data = json.dumps({"v": VERSION, "spooled_at": _iso(now), **record}, default=str).encode("utf-8")
        if len(data) > MAX_RECORD_BYTES:
            _note_drop(folder, f"e-{time.time_ns()}", "too_large", record)
            return {"spooled": False, "dropped": 1, "name": None}
        # os.urandom: what secrets.token_hex reads, without loading hmac / hashlib / random into every hook
        name = f"{_PENDING}{time.time_ns():020d}-{os.getpid()}-{os.urandom(3).hex()}.json"
        tmp = os.path.join(folder, "." + name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.rename(tmp, os.path.join(folder, name))
        dropped = enforce(home, limits, now=now)
        return {"spooled": os.path.exists(os.path.join(folder, name)), "dropped": dropped, "name": name}
    except (OSError, TypeError, ValueError, ImportError):  # no scanner: nothing spooled in clear
        return {"spooled": False, "dropped": 0, "name": None}


def stats(home: str) -> SpoolStats:
    """{depth, bytes, oldest_at, dropped, last_dropped_at, drop_reasons}: what doctor and health show."""
    folder = spool_dir(home)
    names = _pending(folder)
    total = 0
    for name in names:
        try:
            total += os.stat(os.path.join(folder, name)).st_size
        except OSError:
            pass
    return {"depth": len(names), "bytes": total, "oldest_at": _iso(_born(names[0])) if names else None,
            "held": len(_held(folder)), **_read_dropped(os.path.join(folder, DROPPED_LOG))}


def _held(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(os.path.join(folder, HELD_DIR)) if n.startswith(_PENDING))
    except OSError:
        return []


def _failed(folder: str, claimed: str, name: str, record: dict[str, object]) -> bool:
    """One more failed try of a claimed event (the daemon answered 5xx). Below FAILED_TRIES it goes
    back in line, its tries counted in the record (False); at FAILED_TRIES it is set aside in
    spool/held/ (True): kept, counted by `stats`, no longer in the way of the events after it."""
    tries = record.get("tries")
    tries = (tries if isinstance(tries, int) else 0) + 1
    if tries >= FAILED_TRIES:
        held = os.path.join(folder, HELD_DIR)
        os.makedirs(held, mode=0o700, exist_ok=True)
        os.rename(claimed, os.path.join(held, name))
        return True
    kept = {k: v for k, v in record.items() if k != "spool_name"}
    tmp = claimed + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, json.dumps({**kept, "tries": tries}, default=str).encode("utf-8"))
    finally:
        os.close(fd)
    os.rename(tmp, claimed)
    os.rename(claimed, os.path.join(folder, name))
    return False


def has_pending(home: str) -> bool:
    return bool(_pending(spool_dir(home)))


def holds(home: str, name: str) -> bool:
    """True when this spool holds the event `name` (waiting or claimed): a hook flushing it
    reached the daemon of its own home, which replays it itself."""
    if not (isinstance(name, str) and name.startswith(_PENDING) and "/" not in name and len(name) < 200):
        return False
    folder = spool_dir(home)
    return any(os.path.exists(os.path.join(folder, candidate))
               for candidate in (name, _CLAIMED + name[len(_PENDING):]))


def _release_stale_claims(folder: str, now: float) -> None:
    try:
        names = [n for n in os.listdir(folder) if n.startswith(_CLAIMED)]
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            if now - os.stat(path).st_mtime > STALE_CLAIM_S:
                os.rename(path, os.path.join(folder, _PENDING + name[len(_CLAIMED):]))
        except OSError:
            pass


def replay(home: str, handle: Callable[[dict[str, object]], str], limits: Limits | None = None, *,
           max_events: int | None = None, until: float | None = None) -> dict[str, int]:
    """Hand each spooled event, oldest first, to `handle(record)`, which answers 'done' (delete
    it), 'rejected' (delete it, counted as a drop: the daemon refused it), 'retry' (keep it and
    stop: the daemon cannot take events now) or 'failed' (the daemon took it and failed, 5xx: kept
    and stop, until its FAILED_TRIES-th failure sets it aside in spool/held/ and the events after it
    go on — one event the daemon cannot apply no longer holds back all others, issue 33).
    An event another replayer claimed is skipped.
    At most `max_events` events are handed over, none after `until` (time.monotonic()).
    Returns counts per outcome."""
    folder = spool_dir(home)
    counts = {"done": 0, "rejected": 0, "retry": 0, "held": 0, "dropped": enforce(home, limits)}
    _release_stale_claims(folder, time.time())
    for name in _pending(folder):
        if (max_events is not None and counts["done"] + counts["rejected"] >= max_events) or (
                until is not None and time.monotonic() >= until):
            break
        claimed = os.path.join(folder, _CLAIMED + name[len(_PENDING):])
        try:
            os.rename(os.path.join(folder, name), claimed)
            os.utime(claimed)
        except OSError:
            continue  # another replayer took it
        try:
            with open(claimed, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            record = None
        if isinstance(record, dict):
            record["spool_name"] = name  # the event's identity: a replayer applies each name once
        outcome = handle(record) if isinstance(record, dict) else "rejected"
        if outcome == "failed" and isinstance(record, dict):
            try:
                if _failed(folder, claimed, name, record):
                    counts["held"] += 1
                    continue  # set aside: the next event goes
            except OSError:
                outcome = "retry"
            else:
                counts["retry"] += 1
                break
        if outcome == "retry":
            try:
                os.rename(claimed, os.path.join(folder, name))
            except OSError:
                pass
            counts["retry"] += 1
            break
        if outcome == "rejected":
            _note_drop(folder, name, "rejected", record if isinstance(record, dict) else None)
        try:
            os.unlink(claimed)
        except OSError:
            pass
        counts["done" if outcome == "done" else "rejected"] += 1
    return counts
