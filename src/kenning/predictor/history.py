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
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import cast

import numpy as np

from kenning.core import heap
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
COMPACT_ROWS = 20_000  # changed spans' events past which (and a quarter of the columns) merge folds them in
_NORM = math.log1p(NEVER_DAYS)


def _ts(iso: str) -> float:
    return parse_iso(iso).timestamp()


def _days_feature(seconds: float | None) -> float:
    if seconds is None:
        return 1.0
    return math.log1p(min(NEVER_DAYS, max(0.0, seconds / 86400.0))) / _NORM


@dataclass(frozen=True, slots=True)
class _Event:
    """One signal row, as `History.events` answers it (the History holds columns, not these)."""

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


_FTS, _USEFUL = 1, 2  # a row's flags
NOT_RATED = math.nan  # a row's agent column where the agent did not rate it

# One memory's events, sorted by time: (starts, session numbers, ratings or NaN, flags).
_Span = tuple[list[float], list[int], list[float], list[int]]
_NO_SPAN: _Span = ([], [], [], [])


@dataclass(frozen=True)
class _Columns:
    """The events of many memories as numpy columns: memory after memory, each one's by time.
    ~28 bytes a signal row, where an object per row took ~80 (issue 36: 388k rows at a million
    memories)."""

    index: dict[str, int]  # memory id → its place in `offsets`
    offsets: np.ndarray  # int64 [M + 1]: memory i's rows are offsets[i]:offsets[i + 1]
    at: np.ndarray  # float64: the session's start (epoch seconds)
    session: np.ndarray  # int32: the session's number (History.keys)
    agent: np.ndarray  # float64: the agent's rating, NOT_RATED where it did not rate
    flags: np.ndarray  # uint8: _FTS | _USEFUL

    def span(self, memory_id: str) -> _Span:
        i = self.index.get(memory_id)
        if i is None:
            return _NO_SPAN
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return (self.at[a:b].tolist(), self.session[a:b].tolist(), self.agent[a:b].tolist(),
                self.flags[a:b].tolist())

    def rows(self) -> int:
        return len(self.at)

    @classmethod
    def of(cls, memory_ids: list[str], memory: np.ndarray, at: np.ndarray, session: np.ndarray,
           agent: np.ndarray, flags: np.ndarray) -> _Columns:
        """Columns from unsorted rows; `memory` numbers each row's memory in `memory_ids`."""
        order = np.lexsort((at, memory))  # by memory, then time (stable: ties keep their order)
        counts = np.bincount(memory, minlength=len(memory_ids))
        offsets = np.zeros(len(memory_ids) + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        return cls({m: i for i, m in enumerate(memory_ids)}, offsets, at[order], session[order].astype(np.int32),
                   agent[order], flags[order].astype(np.uint8))


_EMPTY = _Columns({}, np.zeros(1, np.int64), np.zeros(0), np.zeros(0, np.int32), np.zeros(0), np.zeros(0, np.uint8))


def _before(span: _Span, at: float) -> int:
    """How many of a span's events are of sessions started before `at`."""
    return bisect.bisect_left(span[0], at)


@dataclass
class History:
    """Signal events by memory and the sessions timeline by project, answerable as of any time.

    The events are numpy columns (`_Columns`) as read, plus the memories `merge` changed since, one
    list span each, until there are enough of those to fold them into new columns. Readers (scoring
    threads) never lock: `merge` only replaces whole values under a key (a memory's span, a session's
    useful set, a project's timeline), each in one assignment, and new columns with the spans they
    took in as one pair."""

    keys: list[str] = field(default_factory=list)  # a session's number → its key (only appended to)
    numbers: dict[str, int] = field(default_factory=dict)  # a session's key → its number
    held: tuple[_Columns, dict[str, _Span]] = field(default_factory=lambda: (_EMPTY, {}))  # columns, spans changed since
    useful: dict[str, set[str]] = field(default_factory=dict)
    timeline: dict[str | None, tuple[list[float], list[str]]] = field(default_factory=dict)
    members: dict[str, set[str]] = field(default_factory=dict)  # a running session → memories it has events of
    ended: set[str] = field(default_factory=set)  # sessions whose events are final (read after their end)
    changed_rows: int = 0  # events held in changed spans (folded into the columns past COMPACT_ROWS)

    def _number(self, session_key: str) -> int:
        found = self.numbers.get(session_key)
        if found is None:
            found = self.numbers[session_key] = len(self.keys)
            self.keys.append(session_key)
        return found

    def _rows(self, events: Iterable[SignalEvent], useful: dict[str, set[str]],
              members: dict[str, set[str]]) -> Iterator[tuple[str, int, float, float, int]]:
        """Each signal row as (memory id, session number, start, rating or NOT_RATED, flags); adds
        to `useful` (by session) and to `members` (by session not ended)."""
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
            if session_key not in self.ended:
                members.setdefault(session_key, set()).add(memory_id)
            if ok:
                useful.setdefault(session_key, set()).add(memory_id)
            yield (memory_id, self._number(session_key), started,
                   agent if rated and agent is not None else NOT_RATED,
                   (_FTS if int(e.get("fts") or 0) > 0 else 0) | (_USEFUL if ok else 0))

    @classmethod
    def build(cls, events: Iterable[SignalEvent], sessions: list[TimelineSession]) -> History:
        h = cls()
        h.ended = {sys.intern(s["session_key"]) for s in sessions if s.get("ended")}
        ids: dict[str, int] = {}
        memory, session, flags = array("i"), array("i"), array("B")
        at, agent = array("d"), array("d")
        for memory_id, number, started, rating, flag in h._rows(events, h.useful, h.members):
            i = ids.get(memory_id)
            if i is None:
                i = ids[memory_id] = len(ids)
            memory.append(i)
            session.append(number)
            at.append(started)
            agent.append(rating)
            flags.append(flag)
        h.held = (_Columns.of(list(ids), np.frombuffer(memory, np.int32), np.frombuffer(at), np.frombuffer(
            session, np.int32), np.frombuffer(agent), np.frombuffer(flags, np.uint8)), {})
        h.timeline = _timeline(sessions)
        return h

    def span(self, memory_id: str) -> _Span:
        """A memory's events (starts, session numbers, ratings or NOT_RATED, flags), by time."""
        columns, changed = self.held
        found = changed.get(memory_id)
        return found if found is not None else columns.span(memory_id)

    def memory_ids(self) -> set[str]:
        columns, changed = self.held
        return {m for m in columns.index if m not in changed} | {m for m, span in changed.items() if span[0]}

    def events(self, memory_id: str) -> list[_Event]:
        at, numbers, agents, flags = self.span(memory_id)
        return [_Event(t, self.keys[n], None if g != g else g, bool(f & _FTS), bool(f & _USEFUL))
                for t, n, g, f in zip(at, numbers, agents, flags)]

    def merge(self, events: Iterable[SignalEvent], sessions: list[TimelineSession], ended: list[str]) -> None:
        """Fold in what changed since this History was read: `sessions` new to its timeline, and
        the signal events of the sessions in `ended` (read after they ended), which replace any
        events held of them (read while they ran)."""
        replaced = {sys.intern(key) for key in ended}
        gone = {self.numbers[key] for key in replaced if key in self.numbers}
        touched = set().union(*(self.members.get(key, ()) for key in replaced))
        self.ended |= replaced
        fresh: dict[str, list[tuple[float, int, float, int]]] = {}
        useful: dict[str, set[str]] = {}
        for memory_id, number, started, rating, flag in self._rows(events, useful, {}):
            fresh.setdefault(memory_id, []).append((started, number, rating, flag))
        for key in replaced:
            if key in useful:
                self.useful[key] = useful[key]
            else:
                self.useful.pop(key, None)
            self.members.pop(key, None)  # final now
        columns, changed = self.held
        for memory_id in touched | fresh.keys():
            old = self.span(memory_id)
            kept = [row for row in zip(*old) if row[1] not in gone]
            merged = sorted(kept + fresh.get(memory_id, []), key=lambda row: row[0])
            before = len(changed[memory_id][0]) if memory_id in changed else 0
            # an empty span too: it hides what the columns hold of this memory
            changed[sys.intern(memory_id)] = cast(_Span, tuple(list(c) for c in zip(*merged))) if merged else _NO_SPAN
            self.changed_rows += len(merged) - before
        for project, (times, keys) in _timeline(sessions).items():
            old_times, old_keys = self.timeline.get(project, ([], []))
            known = set(old_keys)
            pairs = sorted([*zip(old_times, old_keys), *((t, k) for t, k in zip(times, keys) if k not in known)])
            self.timeline[project] = ([t for t, _ in pairs], [k for _, k in pairs])
        if self.changed_rows > max(COMPACT_ROWS, columns.rows() // 4):
            self._compact()

    def _compact(self) -> None:
        """Fold the changed spans into new columns (no read: what is held already)."""
        columns, changed = self.held
        keep = np.ones(len(columns.index), bool)
        keep[np.array([columns.index[m] for m in changed if m in columns.index], np.int64)] = False
        per_row = np.repeat(keep, np.diff(columns.offsets))
        old_ids = list(columns.index)
        ids = [m for m, k in zip(old_ids, keep) if k]
        renumber = np.cumsum(keep) - 1  # a kept memory's new number
        memory = [renumber[np.repeat(np.arange(len(old_ids)), np.diff(columns.offsets))[per_row]]]
        at, session, agent, flags = [columns.at[per_row]], [columns.session[per_row]], [columns.agent[per_row]], [
            columns.flags[per_row]]
        for memory_id, (t, n, g, f) in changed.items():
            if not t:
                continue
            memory.append(np.full(len(t), len(ids), np.int64))
            ids.append(memory_id)
            at.append(np.asarray(t, np.float64))
            session.append(np.asarray(n, np.int32))
            agent.append(np.asarray(g, np.float64))
            flags.append(np.asarray(f, np.uint8))
        self.held = (_Columns.of(ids, np.concatenate(memory), np.concatenate(at), np.concatenate(session),
                                    np.concatenate(agent), np.concatenate(flags)), {})
        self.changed_rows = 0

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
            span = self.span(memory_id)
            if any(g >= USEFUL_AGENT for g in span[2][:_before(span, at)]):  # (NaN compares False)
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
        skip = self.numbers.get(exclude, -1) if exclude is not None else -1
        keys = self.keys

        def overlap(key: str) -> int:
            if key not in shared:
                shared[key] = len(self.useful.get(key, set()) & prev_useful)
            return shared[key]

        for i, memory_id in enumerate(memory_ids):
            times, numbers, agents, flags = span = self.span(memory_id)
            positive = fts = None
            ratings: list[float] = []
            useful_in: list[str] = []
            seen = False
            for j in range(_before(span, at)):
                if numbers[j] == skip:
                    continue
                seen = True
                rating = agents[j]
                if rating == rating:  # rated (not NaN)
                    ratings.append(rating)
                    if rating >= USEFUL_AGENT:
                        positive = times[j]
                if flags[j] & _FTS:
                    fts = times[j]
                if flags[j] & _USEFUL:
                    useful_in.append(keys[numbers[j]])
            if not seen:
                continue
            ratings = ratings[-RECENT_RATINGS:]
            own = 1 if memory_id in prev_useful else 0  # it is in every session it was useful in
            co = sum(1 for key in useful_in if overlap(key) > own)
            out[i] = (
                _days_feature(at - positive if positive is not None else None),
                _days_feature(at - fts if fts is not None else None),
                sum(ratings) / len(ratings) if ratings else 0.0,
                1.0 if memory_id in prev_useful else 0.0,
                co / (len(useful_in) + 1),
                ratings[-1] if ratings else 0.0,
                sum(1 for used in recent_useful if memory_id in used) / RECENT_SESSIONS,
            )
        return out


def _timeline(sessions: list[TimelineSession]) -> dict[str | None, tuple[list[float], list[str]]]:
    """Each project's sessions by start: (starts, keys)."""
    timeline: dict[str | None, list[tuple[float, str]]] = defaultdict(list)
    for s in sessions:
        if s.get("started_at"):
            timeline[s.get("project")].append((_ts(s["started_at"]), sys.intern(s["session_key"])))
    return {p: ([t for t, _ in sorted(v)], [k for _, k in sorted(v)]) for p, v in timeline.items()}


def rated_useful(conn: Connection, memory_ids: list[str], before: str | None, history: History | None = None) -> set[str]:
    """Which of `memory_ids` the agent rated useful (≥ USEFUL_AGENT) in a session started before
    `before`; from `history` when the caller has it loaded (training), else from the store."""
    if not memory_ids or not before:
        return set()
    if history is None:
        history = History.build(store.signal_events(conn, memory_ids=memory_ids, before=before), [])
    return history.rated_useful(memory_ids, before)


def _heldof(conn: Connection, session_keys: list[str]) -> Iterator[SignalEvent]:
    """The signal events of `session_keys`, read KEYS_PER_READ sessions at a time."""
    return chain.from_iterable(store.signal_events(conn, session_keys=session_keys[start:start + KEYS_PER_READ])
                               for start in range(0, len(session_keys), KEYS_PER_READ))


def load_all(conn: Connection) -> History:
    """Every signal event and session: training (each sample asks as of its own start) and
    scoring (Predictor keeps one, refreshed at each session end) read the same History.

    Read a batch of sessions at a time, not in one statement: PostgreSQL's client holds a
    statement's whole result until it is read, and at a million memories (388k signal rows) that
    one result took ~85 MB the process kept after it (issue 36). The rows read are garbage once
    the columns are built; their pages go back to the OS (core.heap): a fit process had kept ~60 MB
    of them at a million memories, 13 MB held."""
    sessions = store.session_timeline(conn)
    keys = [s["session_key"] for s in sessions]
    history = History.build(chain(_heldof(conn, keys), store.signal_events(conn, unstarted=True)), sessions)
    heap.release()
    return history


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
    history.merge(_heldof(conn, ended), new, ended)
    return len(ended)
