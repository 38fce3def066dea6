"""Observer: the per-session scratchpads, their checkpoints, the step decider and promotion.

The hot path (`post_tool_use`, `observe`) only updates an in-memory scratchpad under a lock
and runs the decider's indexed read; it writes to the database only when it injects (to
record the injection). A background thread checkpoints dirty scratchpads every
`checkpoint_interval_s`, so a daemon restart loses at most one interval; `start()` restores
them. Session end hands the scratchpad to promotion on a single worker thread.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from datetime import timedelta

from typing_extensions import TypedDict  # pydantic reads StepAnswer (the post-tool-use route's answer) on Python 3.11

from kenning.core.clock import now_iso, to_iso, utcnow
from kenning.core.errors import NotFound
from kenning.core.events import ToolResult
from kenning.core.telemetry import record_error, record_latency
from kenning.core.types import Memory
from kenning.observer import decider, intake, lifecycle
from kenning.observer.deps import ObserverDeps
from kenning.observer.promotion import Promotion, promote_session
from kenning.observer.scratchpad import LiveSummary, Scratchpad, StepContext
from kenning.observer.transcript import reasoning_from_transcript
from kenning.store import observer as store
from kenning.store import sessions as session_store

RESTORE_DAYS = 7
INJECTION_FLUSH_S = 0.5  # step injections are recorded off the hook's path within this
MAX_INJECTED_IDS = 200


def ab_group(session_key: str, project: str | None, control: int, passive: int) -> str:
    """v4 section 19: a stable hash of session and project picks control / passive / full."""
    bucket = int(hashlib.sha1(f"{session_key}:{project or ''}".encode()).hexdigest(), 16) % 100
    if bucket < control:
        return "control"
    return "passive" if bucket < control + passive else "full"


class StepAnswer(TypedDict, total=False):
    """What a tool step answers: the text to inject (may be empty), which memories, the step; the post-tool-use
    hook's answer extends it (hookservice.ToolAnswer). Keys in the order the hook route writes them."""

    inject: str
    memory_ids: list[str]
    step: int
    reasons: list[str]
    degraded: bool  # the decider failed: no injection at this step


class EndAnswer(TypedDict, total=False):
    """A session end that promoted nothing now: queued in the background, nothing observed, or failed."""

    queued: bool
    promoted: list[str]
    reason: str
    error: str


class ObserverSessionView(TypedDict):
    session_key: str
    live: LiveSummary | None
    finished: dict[str, object] | None  # store.observer.ObservedSession's fields
    signals: list[dict[str, object]]  # store.observer.SessionSignal's fields
    step_injections: list[dict[str, object]]  # store.observer.StepInjection's fields


def _p95(values: Iterable[float]) -> float | None:
    data = sorted(values)
    return round(data[min(len(data) - 1, int(len(data) * 0.95))], 4) if data else None


class Observer:
    def __init__(self, deps: ObserverDeps) -> None:
        self.deps = deps
        self.cfg = deps.settings
        self._pads: OrderedDict[str, Scratchpad] = OrderedDict()
        self._evicted: dict[str, Scratchpad] = {}
        self._on_disk: set[str] = set()
        self._groups: dict[str, str] = {}
        self._pending: dict[tuple[str, str], tuple[dict[str, object], StepContext]] = {}
        self._injections: list[tuple[str, list[tuple[str, float]], str]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._observe_ms: deque[float] = deque(maxlen=2000)
        self._decide_ms: deque[float] = deque(maxlen=2000)
        self.counters = {"events": 0, "injections": 0, "checkpoints": 0, "promotions": 0, "errors": 0}

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Restore checkpointed scratchpads of recent sessions and start the checkpoint thread."""
        since = to_iso(utcnow() - timedelta(days=RESTORE_DAYS))
        for key, state in store.load_scratchpads(self.deps.db.reader(), since=since, limit=self.cfg.max_sessions):
            self._pads[key] = Scratchpad.from_state(key, state, self._caps())
        self._thread = threading.Thread(target=self._loop, name="observer-checkpoint", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        self.flush_injections()
        self.checkpoint()

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(min(INJECTION_FLUSH_S, self.cfg.checkpoint_interval_s)):
            try:
                self.flush_injections()
                if time.monotonic() - last >= self.cfg.checkpoint_interval_s:
                    last = time.monotonic()
                    self.checkpoint()
            except Exception as exc:  # background boundary
                record_error("observer", f"scratchpad checkpoint failed: {exc}")

    def flush_injections(self) -> int:
        """Record queued step injections (session_memories phase 'step' + one access each) in one tx."""
        with self._lock:
            queued, self._injections = self._injections, []
        if not queued:
            return 0
        with self.deps.db.with_write_tx() as conn:
            for session_key, shown, at in queued:
                store.record_step_injection(conn, session_key, shown, at)
        return len(queued)

    def checkpoint(self) -> int:
        """Write every changed scratchpad (and those evicted from memory) in one transaction."""
        with self._lock:
            dirty = [p for p in self._pads.values() if p.dirty] + list(self._evicted.values())
            rows = [(p.session_key, p.project, json.dumps(p.to_state(), default=str), p.step) for p in dirty]
            for pad in dirty:
                pad.dirty = False
            evicted, self._evicted = list(self._evicted), {}
        if not rows:
            return 0
        with self.deps.db.with_write_tx() as conn:
            store.save_scratchpads(conn, rows, now_iso())
        self._on_disk.update(evicted)
        self.counters["checkpoints"] += 1
        return len(rows)

    def _caps(self) -> dict[str, int]:
        c = self.cfg
        return {"files": c.max_files, "patterns": c.max_patterns, "errors": c.max_errors,
                "signals": c.max_signals_per_class}

    # -- scratchpads --------------------------------------------------------------------------------
    def _pad(self, key: str, *, cwd: str | None = None, project: str | None = None,
             session_type: str | None = None) -> Scratchpad:
        """The session's scratchpad (caller holds the lock); created, or brought back from eviction."""
        pad = self._pads.get(key)
        if pad is None:
            pad = self._evicted.pop(key, None)
            if pad is None and key in self._on_disk:
                state = store.get_scratchpad(self.deps.db.reader(), key)
                pad = Scratchpad.from_state(key, state, self._caps()) if state else None
            if pad is None:
                pad = Scratchpad(key, project=project, cwd=cwd, caps=self._caps())
            self._pads[key] = pad
            while len(self._pads) > self.cfg.max_sessions:
                old_key, old = self._pads.popitem(last=False)
                self._evicted[old_key] = old
        else:
            self._pads.move_to_end(key)
        if cwd and not pad.cwd:
            pad.cwd = cwd
        if project and not pad.project:
            pad.project = project
        if not pad.project and pad.cwd:
            pad.project = pad.cwd.rstrip("/").rsplit("/", 1)[-1] or None
        if session_type:
            pad.session_type = session_type
        return pad

    def group(self, pad: Scratchpad) -> str:
        ab = self.cfg.ab
        if not ab.enabled:
            return "full"
        if pad.session_key not in self._groups:
            self._groups[pad.session_key] = ab_group(pad.session_key, pad.project, ab.control_percent,
                                                     ab.passive_percent)
        return self._groups[pad.session_key]

    # -- hot path ---------------------------------------------------------------------------------------
    def post_tool_use(self, event: ToolResult, session_type: str | None = None) -> StepAnswer:
        """One tool step: observe it (a failed tool with its error text), then ask the decider. Whether it
        failed is the event's (decided where it was built). A tool name that is not a short name raises InvalidInput."""
        tool = intake.tool_name(event.tool_name)
        args = dict(event.tool_input)
        result = (event.error if not event.success and event.error else event.output)[:intake.MAX_RESULT_CHARS]
        started = time.perf_counter()
        with self._lock:
            pad = self._pad(event.session_key, cwd=event.cwd, project=event.project, session_type=session_type)
            ctx = pad.on_tool_call(tool, args)
            ctx = pad.on_tool_result(tool, args, result, not event.success, ctx)
        self._timed_observe(started)
        return self._decide(pad, ctx)

    def observe(self, body: Mapping[str, object]) -> StepAnswer:
        """The generic event API: tool-call, tool-result, reasoning, step-complete."""
        kind = intake.event_type(body)
        key = intake.session_key(body)
        text = intake.reasoning_text(body) if kind == "reasoning" else ""
        ev = intake.tool_event(body) if kind.startswith("tool") else None
        started = time.perf_counter()
        ctx: StepContext | None = None
        with self._lock:
            pad = self._pad(key, cwd=ev.cwd if ev else None, project=ev.project if ev else None)
            if kind == "tool-call" and ev is not None:
                ctx = pad.on_tool_call(ev.tool, ev.args)
                self._pending[(key, ev.tool)] = (ev.args, ctx)
                if len(self._pending) > self.cfg.max_sessions * 4:
                    self._pending.pop(next(iter(self._pending)))
            elif kind == "tool-result" and ev is not None:
                args, call_ctx = self._pending.pop((key, ev.tool), (None, None))
                if call_ctx is None:
                    call_ctx = pad.on_tool_call(ev.tool, ev.args)
                ctx = pad.on_tool_result(ev.tool, args or ev.args, ev.result, ev.is_error, call_ctx)
            elif kind == "reasoning":
                pad.on_reasoning(text)
        self._timed_observe(started)
        if kind != "tool-result" or ctx is None:
            return {"step": pad.step, "inject": "", "memory_ids": []}
        return self._decide(pad, ctx)

    def _timed_observe(self, started: float) -> None:
        ms = (time.perf_counter() - started) * 1000
        self._observe_ms.append(ms)
        self.counters["events"] += 1
        record_latency("observer.observe", ms)

    def _decide(self, pad: Scratchpad, ctx: StepContext) -> StepAnswer:
        empty: StepAnswer = {"step": pad.step, "inject": "", "memory_ids": []}
        if not self.cfg.step_injection or self.group(pad) != "full":
            return empty
        started = time.perf_counter()
        try:
            decision = decider.decide(self.deps.db, self.cfg, pad, ctx, self.deps.ranking)
            if not decision.memories:
                return empty
            text = decider.render(decision, self.cfg.step_budget_chars)
            with self._lock:
                pad.injected = (pad.injected + decision.ids)[-MAX_INJECTED_IDS:]
                pad.dirty = True
                self._injections.append((pad.session_key, [(m.id, m.confidence) for _, m in decision.memories],
                                         now_iso()))
            if self._thread is None:  # not started (offline CLI, tests without background): record now
                self.flush_injections()
            self.counters["injections"] += 1
            return {"step": pad.step, "inject": text, "memory_ids": decision.ids,
                    "reasons": [k for k, _ in decision.memories]}
        except Exception as exc:  # the decider is optional: the step goes on without it
            self.counters["errors"] += 1
            record_error("observer", f"step decision failed: {exc}", session_key=pad.session_key)
            return {**empty, "degraded": True}
        finally:
            ms = (time.perf_counter() - started) * 1000
            self._decide_ms.append(ms)
            record_latency("observer.decide", ms)

    # -- session end ----------------------------------------------------------------------------------
    def end_session(self, session_key: str, *, wait: bool = False) -> Promotion | EndAnswer:
        """Promote the session's scratchpad (in the background unless `wait`)."""
        self.flush_injections()
        with self._lock:
            pad = self._pads.pop(session_key, None) or self._evicted.pop(session_key, None)
            group = self._groups.pop(session_key, None)
        if pad is None:
            state = store.get_scratchpad(self.deps.db.reader(), session_key)
            if state is None:
                return {"queued": False, "promoted": [], "reason": "no observed events"}
            pad = Scratchpad.from_state(session_key, state, self._caps())
        self._on_disk.discard(session_key)
        if not wait:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="observer-promote")
            self._executor.submit(self._promote, pad, group)
            return {"queued": True}
        return self._promote(pad, group)

    def _promote(self, pad: Scratchpad, group: str | None) -> Promotion | EndAnswer:
        try:
            reader = self.deps.db.reader()
            session = session_store.get_session(reader, pad.session_key)
            project = (session["project"] if session else None) or pad.project
            stored = session_store.get_transcript(reader, pad.session_key)
            if stored:
                reasoning_from_transcript(pad, stored.transcript)
            result = promote_session(self.deps, pad, project=project, ab_group=group or self.group(pad))
            self.counters["promotions"] += 1
            return result
        except Exception as exc:  # worker boundary: keep the checkpoint so nothing observed is lost
            self.counters["errors"] += 1
            record_error("observer", f"promotion failed: {exc}", session_key=pad.session_key)
            with self.deps.db.with_write_tx() as conn:
                store.save_scratchpads(conn, [(pad.session_key, pad.project, pad.to_state(), pad.step)], now_iso())
            return {"queued": False, "promoted": [], "error": str(exc)}

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Block until queued promotions finished (tests, benchmarks)."""
        if self._executor is not None:
            future: Future = self._executor.submit(lambda: None)
            future.result(timeout=timeout)

    # -- reading --------------------------------------------------------------------------------------
    def session(self, session_key: str) -> ObserverSessionView:
        self.flush_injections()
        with self._lock:
            pad = self._pads.get(session_key) or self._evicted.get(session_key)
            live = pad.summary() if pad else None
        conn = self.deps.db.reader()
        if live is None and session_key not in self._on_disk:
            state = store.get_scratchpad(conn, session_key)
            live = Scratchpad.from_state(session_key, state).summary() if state else None
        finished = store.get_session(conn, session_key)
        signals = store.session_signals(conn, session_key)
        injections = store.step_injections(conn, session_key)
        if live is None and finished is None and not injections and session_store.get_session(conn, session_key) is None:
            raise NotFound(f"the observer has nothing for session {session_key!r}")  # a session nobody started
        # a session kenning knows with no tool step observed: an empty view (the dashboard asks for every session)
        return {"session_key": session_key, "live": live, "finished": asdict(finished) if finished else None,
                "signals": [asdict(s) for s in signals], "step_injections": [asdict(i) for i in injections]}

    def lifecycle_of(self, memory: Memory) -> lifecycle.LifecycleView:
        """Trust level, decayed confidence, half-life and when pruning would take it (for `show`)."""
        return lifecycle.describe(memory, self.cfg.lifecycle)

    def run_lifecycle(self) -> lifecycle.LifecycleRun:
        return lifecycle.run(self.deps.db, self.cfg.lifecycle)

    def status(self) -> dict[str, object]:
        with self._lock:
            live = len(self._pads)
        return {
            "enabled": self.cfg.enabled, "live_sessions": live, "counters": dict(self.counters),
            "observe_ms_p95": _p95(self._observe_ms), "decide_ms_p95": _p95(self._decide_ms),
            "checkpoint_interval_s": self.cfg.checkpoint_interval_s, "ab": self.cfg.ab.model_dump(),
            "lifecycle": self.cfg.lifecycle.model_dump(),
            "ab_metrics": [asdict(m) for m in store.ab_metrics(self.deps.db.reader())],
        }
