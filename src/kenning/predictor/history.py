"""What each candidate did for this user lately: the seven history features (issues 11, 32).

The twelve base features say nothing about yesterday, so the model could not learn task
continuity. Per candidate, as of the session's start (only sessions that started before it):

    days_since_positive   log1p(days since an agent rated it ≥ 0.5) / log1p(90); never = 1
    days_since_fts        log1p(days since a prompt's FTS matched it) / log1p(90); never = 1
    feedback_mean         mean of its last 5 agent ratings (−1..1); 0 when never rated
    useful_prev_session   1 when it was useful in the project's previous session
    co_use                share of the sessions it was useful in where a memory useful in the
                          project's previous session was useful too (n_co / (n + 1))
    last_rating           the agent's latest rating of it (−1..1); 0 when never rated — a
                          preference rated down once is dropped now, not after five ratings (drift)
    useful_recent         share of the project's last RECENT_SESSIONS sessions it was useful in:
                          a task runs over several sessions, and a session on another task between
                          them does not end it

*Useful* in a session: the agent rated it ≥ 0.5, or (not rated) prompts FTS-matched it twice or
the transcript touched it (predictor_touched). Training and scoring build these from the same
rows (`History`), so the model sees identical values in both.
"""

from __future__ import annotations

import bisect
import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from kenning.core.clock import parse_iso
from kenning.store import predictor as store
from kenning.store.backend import Connection
from kenning.store.predictor import SignalEvent, TimelineSession

HISTORY_FEATURES = ("days_since_positive", "days_since_fts", "feedback_mean", "useful_prev_session", "co_use",
                    "last_rating", "useful_recent")
# The gate starts with weights on them (constants.HISTORY_PRIOR): see model.py.
NO_HISTORY = (1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
RECENT_SESSIONS = 3
USEFUL_AGENT = 0.5
NEVER_DAYS = 90.0
RECENT_RATINGS = 5
KEYS_PER_READ = 500  # session keys in one signal_events read
_NORM = math.log1p(NEVER_DAYS)


def _ts(iso: str) -> float:
    return parse_iso(iso).timestamp()


def _days_feature(seconds: float | None) -> float:
    if seconds is None:
        return 1.0
    return math.log1p(min(NEVER_DAYS, max(0.0, seconds / 86400.0))) / _NORM


@dataclass(slots=True)
class _Event:
    """One signal row. Every fit builds one per signal row (and the daemon keeps them): slots and
    shared key strings keep them small (issue 36)."""

    at: float
    session_key: str
    agent: float | None
    fts: bool
    useful: bool


def is_useful(agent: float | None, rated: bool, fts: int, touched: bool) -> bool:
    """Rated: the agent's word. Unrated: the transcript touched it, or prompts FTS-matched it
    at least twice (one BM25 top-20 match is too common to mean much: measured in
    bench/predictor_sim, P@12 0.35 → 0.40 offline with the stricter rule)."""
    if rated and agent is not None:
        return agent >= USEFUL_AGENT
    return fts >= 2 or touched


def _at(event: _Event) -> float:
    return event.at


def _before(events: list[_Event], at: float) -> list[_Event]:
    """The events (sorted by time) of sessions started before `at`."""
    return events[:bisect.bisect_left(events, at, key=_at)]


@dataclass
class History:
    """Signal events by memory and the sessions timeline by project, answerable as of any time.

    Readers (scoring threads) never lock: `merge` only replaces whole values under a key (a
    memory's event list, a session's useful set, a project's timeline), each in one assignment."""

    by_memory: dict[str, list[_Event]] = field(default_factory=dict)  # each sorted by `at`
    useful: dict[str, set[str]] = field(default_factory=dict)
    timeline: dict[str | None, tuple[list[float], list[str]]] = field(default_factory=dict)
    members: dict[str, set[str]] = field(default_factory=dict)  # a running session → memories it has events of
    ended: set[str] = field(default_factory=set)  # sessions whose events are final (read after their end)

    @classmethod
    def build(cls, events: Iterable[SignalEvent], sessions: list[TimelineSession]) -> History:
        h = cls()
        by_memory: dict[str, list[_Event]] = defaultdict(list)
        useful: dict[str, set[str]] = defaultdict(set)
        members: dict[str, set[str]] = defaultdict(set)
        starts: dict[str, float] = {}  # a session's rows share its start: parsed once
        for e in events:
            rated = int(e.get("ratings") or 0) > 0
            given = e.get("agent")
            agent = float(given) if given is not None else None
            ok = is_useful(agent, rated, int(e.get("fts") or 0), bool(e.get("touched")))
            # a session key and a memory id recur across rows: each held once (the same text)
            session_key, memory_id = sys.intern(e["session_key"]), sys.intern(e["memory_id"])
            started = starts.get(e["started_at"])
            if started is None:
                started = starts[e["started_at"]] = _ts(e["started_at"])
            by_memory[memory_id].append(_Event(started, session_key,
                                               agent if rated else None, int(e.get("fts") or 0) > 0, ok))
            members[session_key].add(memory_id)
            if ok:
                useful[session_key].add(memory_id)
        for items in by_memory.values():
            items.sort(key=_at)
        timeline: dict[str | None, list[tuple[float, str]]] = defaultdict(list)
        for s in sessions:
            if s.get("started_at"):
                timeline[s.get("project")].append((_ts(s["started_at"]), sys.intern(s["session_key"])))
        h.timeline = {p: ([t for t, _ in sorted(v)], [k for _, k in sorted(v)]) for p, v in timeline.items()}
        h.ended = {sys.intern(s["session_key"]) for s in sessions if s.get("ended")}
        h.by_memory, h.useful = dict(by_memory), dict(useful)
        h.members = {key: ids for key, ids in members.items() if key not in h.ended}  # only these can change
        return h

    def merge(self, events: Iterable[SignalEvent], sessions: list[TimelineSession], ended: list[str]) -> None:
        """Fold in what changed since this History was read: `sessions` new to its timeline, and
        the signal events of the sessions in `ended` (read after they ended), which replace any
        events held of them (read while they ran)."""
        fresh = History.build(events, sessions)
        replaced = {sys.intern(key) for key in ended}
        changed = set(fresh.by_memory).union(*(self.members.get(key, ()) for key in replaced))
        for memory_id in changed:
            kept = [e for e in self.by_memory.get(memory_id, ()) if e.session_key not in replaced]
            merged = sorted(kept + fresh.by_memory.get(memory_id, []), key=_at)
            if merged:
                self.by_memory[sys.intern(memory_id)] = merged
            else:
                self.by_memory.pop(memory_id, None)
        for key in replaced:
            if key in fresh.useful:
                self.useful[key] = fresh.useful[key]
            else:
                self.useful.pop(key, None)
            self.members.pop(key, None)  # final now
        for project, (times, keys) in fresh.timeline.items():
            old_times, old_keys = self.timeline.get(project, ([], []))
            known = set(old_keys)
            pairs = sorted([*zip(old_times, old_keys), *((t, k) for t, k in zip(times, keys) if k not in known)])
            self.timeline[project] = ([t for t, _ in pairs], [k for _, k in pairs])
        self.ended |= replaced

    def known_sessions(self) -> set[str]:
        return {key for _, keys in self.timeline.values() for key in keys}

    def previous_session(self, project: str | None, at: float, exclude: str | None) -> str | None:
        times, keys = self.timeline.get(project, ([], []))
        i = bisect.bisect_left(times, at) - 1
        while i >= 0 and keys[i] == exclude:
            i -= 1
        return keys[i] if i >= 0 else None

    def recent_sessions(self, project: str | None, at: float, exclude: str | None, n: int) -> list[str]:
        """The project's last `n` sessions started before `at` (less `exclude`), newest first."""
        times, keys = self.timeline.get(project, ([], []))
        i = bisect.bisect_left(times, at) - 1
        out: list[str] = []
        while i >= 0 and len(out) < n:
            if keys[i] != exclude:
                out.append(keys[i])
            i -= 1
        return out

    def rated_useful(self, memory_ids: list[str], at_iso: str) -> set[str]:
        """Memories an agent rated ≥ USEFUL_AGENT in a session started before `at_iso`."""
        at = _ts(at_iso)
        out = set()
        for memory_id in memory_ids:
            if any(e.agent is not None and e.agent >= USEFUL_AGENT for e in _before(self.by_memory.get(memory_id, []), at)):
                out.add(memory_id)
        return out

    def features(self, memory_ids: list[str], at_iso: str, project: str | None,
                 exclude: str | None = None) -> np.ndarray:
        """[N, 7] history features as of `at_iso` (events of sessions started before it)."""
        at = _ts(at_iso)
        recent = self.recent_sessions(project, at, exclude, RECENT_SESSIONS)
        prev = recent[0] if recent else None
        prev_useful = self.useful.get(prev, set()) if prev else set()
        recent_useful = [self.useful.get(key, set()) for key in recent]
        out = np.tile(np.asarray(NO_HISTORY, np.float32), (len(memory_ids), 1))
        shared: dict[str, int] = {}  # session → how many of prev_useful were useful in it too

        def overlap(key: str) -> int:
            if key not in shared:
                shared[key] = len(self.useful.get(key, set()) & prev_useful)
            return shared[key]

        for i, memory_id in enumerate(memory_ids):
            events = [e for e in _before(self.by_memory.get(memory_id, []), at) if e.session_key != exclude]
            if not events:
                continue
            positive = [e.at for e in events if e.agent is not None and e.agent >= USEFUL_AGENT]
            fts = [e.at for e in events if e.fts]
            ratings = [e.agent for e in events if e.agent is not None][-RECENT_RATINGS:]
            useful_in = [e.session_key for e in events if e.useful]
            own = 1 if memory_id in prev_useful else 0  # it is in every session it was useful in
            co = sum(1 for key in useful_in if overlap(key) > own)
            out[i] = (
                _days_feature(at - positive[-1] if positive else None),
                _days_feature(at - fts[-1] if fts else None),
                sum(ratings) / len(ratings) if ratings else 0.0,
                1.0 if memory_id in prev_useful else 0.0,
                co / (len(useful_in) + 1),
                ratings[-1] if ratings else 0.0,
                sum(1 for used in recent_useful if memory_id in used) / RECENT_SESSIONS,
            )
        return out


def rated_useful(conn: Connection, memory_ids: list[str], before: str | None, history: History | None = None) -> set[str]:
    """Which of `memory_ids` the agent rated useful (≥ USEFUL_AGENT) in a session started before
    `before`; from `history` when the caller has it loaded (training), else from the store."""
    if not memory_ids or not before:
        return set()
    if history is None:
        history = History.build(store.signal_events(conn, memory_ids=memory_ids, before=before), [])
    return history.rated_useful(memory_ids, before)


def _events_of(conn: Connection, session_keys: list[str]) -> Iterator[SignalEvent]:
    """The signal events of `session_keys`, read KEYS_PER_READ sessions at a time."""
    return chain.from_iterable(store.signal_events(conn, session_keys=session_keys[start:start + KEYS_PER_READ])
                               for start in range(0, len(session_keys), KEYS_PER_READ))


def load_all(conn: Connection) -> History:
    """Every signal event and session: training (each sample asks as of its own start) and
    scoring (Predictor keeps one, refreshed at each session end) read the same History.

    Read a batch of sessions at a time, not in one statement: PostgreSQL's client holds a
    statement's whole result until it is read, and at a million memories (388k signal rows) that
    one result took ~85 MB the process kept after it (issue 36)."""
    sessions = store.session_timeline(conn)
    keys = [s["session_key"] for s in sessions]
    return History.build(chain(_events_of(conn, keys), store.signal_events(conn, unstarted=True)), sessions)


def catch_up(history: History, conn: Connection) -> int:
    """Bring a loaded History up to date in place: sessions started since join its timeline, and
    the events of sessions that ended since (on this daemon or another on the same store) replace
    what it held of them. What reading everything again (load_all) would give, except for rows
    changed after their session ended; the number of sessions whose events were read.

    At each session end this reads the sessions table and the new sessions' events, where
    load_all read every signal event: ~0.6 s and ~40 MB of garbage a session end at 2,400
    sessions, growing with each (issue 36)."""
    sessions = store.session_timeline(conn)
    known = history.known_sessions()
    new = [s for s in sessions if s["session_key"] not in known]
    ended = [s["session_key"] for s in sessions if s.get("ended") and s["session_key"] not in history.ended]
    history.merge(_events_of(conn, ended), new, ended)
    return len(ended)
