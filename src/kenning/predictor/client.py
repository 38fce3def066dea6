"""The daemon's side of the sidecar: spawn, talk JSON-RPC 2.0, supervise, never block the agent.

Supervision rules (scorer seed §4.1-4.3):
  - a `score` call waits at most `score_timeout_ms`; slower ⇒ None (caller uses the baseline)
    and a `predictor_timeout` error; HANG_RESTART_AFTER consecutive timeouts ⇒ the sidecar is
    treated as hung: killed and counted as a crash;
  - GARBAGE_RESTART_AFTER consecutive unparseable lines ⇒ treated as broken, same as a crash;
  - a crash (exit, hang, garbage) schedules a restart with exponential backoff;
    `crash_disable_threshold` crashes within an hour ⇒ disabled (no more restarts);
  - no orphans: stop() closes stdin (the sidecar exits on EOF), then terminates/kills; an
    atexit hook does the same, and the sidecar itself exits if its parent disappears.
A reader thread matches responses to requests by id, so a long `train_from_db` never
blocks a `score`.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import cast

from kenning.core import telemetry
from kenning.core.errors import ProviderError
from kenning.predictor import constants as C
from kenning.predictor.guard import PARENT_ENV
from kenning.predictor.protocol import ScoreReply, ScoreRequest


class SidecarError(ProviderError):
    """The sidecar answered with an error, died, or is not running."""


class SidecarClient:
    def __init__(
        self, argv: list[str], *, score_timeout_ms: int = 120, crash_disable_threshold: int = 3,
        stderr_path: Path | None = None, ready_timeout_s: float = 60.0,
    ) -> None:
        self.argv = list(argv)
        self.score_timeout_s = score_timeout_ms / 1000.0
        self.crash_disable_threshold = crash_disable_threshold
        self.stderr_path = stderr_path
        self.ready_timeout_s = ready_timeout_s
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._pending: dict[int, Future] = {}
        self._ids = itertools.count(1)
        self._crashes: deque[float] = deque()
        self._restart_timer: threading.Timer | None = None
        self._stopping = False
        self._generation = 0
        self.disabled = False
        self.ready = False
        self.restarts = 0
        self.timeouts = 0
        self.parse_errors = 0
        self._consecutive_timeouts = 0
        self._consecutive_garbage = 0
        self.last_score_ms: float | None = None
        self.started_at: float | None = None
        self.last_status: dict[str, object] = {}
        atexit.register(self.stop)

    # -- lifecycle -------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    @property
    def alive(self) -> bool:
        return self.pid is not None

    def crashes_last_hour(self) -> int:
        cutoff = time.monotonic() - C.CRASH_WINDOW_S
        while self._crashes and self._crashes[0] < cutoff:
            self._crashes.popleft()
        return len(self._crashes)

    def start(self, wait_ready: bool = False) -> None:
        with self._lock:
            self._stopping = False
            if self.disabled or self.alive:
                return
            self._spawn()
        if wait_ready:
            self.wait_ready(self.ready_timeout_s)

    def _spawn(self) -> None:
        stderr = open(self.stderr_path, "ab") if self.stderr_path else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                text=True, encoding="utf-8", bufsize=1, close_fds=True,
                env={**os.environ, PARENT_ENV: str(os.getpid())},  # predictor.guard: die with this process
            )
        finally:
            if not isinstance(stderr, int):  # (subprocess.DEVNULL is an int)
                stderr.close()
        _widen_pipes(proc)
        self._generation += 1
        self._proc = proc
        self.ready = False
        self.started_at = time.monotonic()
        self._consecutive_timeouts = self._consecutive_garbage = 0
        threading.Thread(target=self._read_loop, args=(proc, self._generation), daemon=True,
                         name="predictor-sidecar-reader").start()
        fut = self._send(proc, "status", {})
        fut.add_done_callback(lambda f: self._on_ready(f, proc))
        telemetry.log_event("predictor", "predictor.spawn", pid=proc.pid, restarts=self.restarts)

    def _on_ready(self, fut: Future, proc: subprocess.Popen) -> None:
        if fut.exception() is None and proc is self._proc:
            self.last_status = fut.result()
            self.ready = True

    def wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.ready:
                return True
            if self.disabled:
                return False
            time.sleep(0.02)
        return self.ready

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            if self._restart_timer is not None:
                self._restart_timer.cancel()
                self._restart_timer = None
            proc, self._proc = self._proc, None
            self.ready = False
        if proc is not None:
            self._terminate(proc)
        self._fail_pending(SidecarError("sidecar stopped"))

    @staticmethod
    def _terminate(proc: subprocess.Popen) -> None:
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    # -- crash handling ---------------------------------------------------------
    def _on_crash(self, proc: subprocess.Popen, reason: str) -> None:
        with self._lock:
            if proc is not self._proc or self._stopping:
                return
            self._proc = None
            self.ready = False
            self._crashes.append(time.monotonic())
            crashes = self.crashes_last_hour()
            telemetry.record_error("predictor", f"predictor_crash: {reason}", pid=proc.pid, crashes_last_hour=crashes)
            telemetry.log_event("predictor", "predictor.crash", level="warning", reason=reason,
                                exit_code=proc.poll(), crashes_last_hour=crashes)
            if crashes >= self.crash_disable_threshold:
                self.disabled = True
                telemetry.log_event("predictor", "predictor.disabled", level="error", crashes_last_hour=crashes)
            else:
                first, cap = C.RESTART_BACKOFF_S
                delay = min(cap, first * 2 ** (crashes - 1))
                self._restart_timer = threading.Timer(delay, self._restart)
                self._restart_timer.daemon = True
                self._restart_timer.start()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        self._fail_pending(SidecarError(f"sidecar crashed: {reason}"))

    def _restart(self) -> None:
        with self._lock:
            self._restart_timer = None
            if self._stopping or self.disabled or self.alive:
                return
            self.restarts += 1
            self._spawn()

    def reset(self) -> None:
        """Re-enable after a crash-disable (manual `kenning predictor` action)."""
        with self._lock:
            self._crashes.clear()
            self.disabled = False
        self.start()

    # -- the wire ---------------------------------------------------------------
    def _send(self, proc: subprocess.Popen, method: str, params: Mapping[str, object]) -> Future:
        req_id = next(self._ids)
        fut: Future = Future()
        self._pending[req_id] = fut
        line = json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params},
                          separators=(",", ":"))
        try:
            assert proc.stdin is not None
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        except (OSError, ValueError) as exc:
            self._pending.pop(req_id, None)
            fut.set_exception(SidecarError(f"cannot write to sidecar: {exc}"))
        fut.req_id = req_id  # type: ignore[attr-defined]
        return fut

    def _read_loop(self, proc: subprocess.Popen, generation: int) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                msg = json.loads(line)
                if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                    raise ValueError("not a JSON-RPC 2.0 object")
            except ValueError:
                self.parse_errors += 1
                self._consecutive_garbage += 1
                telemetry.record_error("predictor", "predictor_parse_error", line=line[:200])
                if self._consecutive_garbage >= C.GARBAGE_RESTART_AFTER:
                    self._on_crash(proc, "unparseable output")
                    return
                continue
            self._consecutive_garbage = 0
            msg_id = msg.get("id")
            fut = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
            if fut is None or fut.done():
                continue
            if "error" in msg:
                err = msg["error"] or {}
                fut.set_exception(SidecarError(f"{err.get('message')} (code {err.get('code')})"))
            else:
                fut.set_result(msg.get("result"))
        proc.wait()
        self._on_crash(proc, f"exited with code {proc.returncode}")

    def _fail_pending(self, exc: Exception) -> None:
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(exc)

    def call(self, method: str, params: Mapping[str, object] | None = None, timeout_s: float = 30.0) -> object:
        """Send one request and wait for its result (the method's reply, JSON from the sidecar process:
        protocol.py names each method's); raises SidecarError or TimeoutError."""
        proc = self._proc
        if self.disabled:
            raise SidecarError("predictor disabled after repeated crashes")
        if proc is None or proc.poll() is not None:
            raise SidecarError("sidecar not running")
        fut = self._send(proc, method, params or {})
        try:
            return fut.result(timeout=timeout_s)
        except FutureTimeout:
            self._pending.pop(getattr(fut, "req_id", -1), None)
            raise TimeoutError(f"{method} took longer than {timeout_s:.3f} s") from None

    def score(self, params: ScoreRequest) -> ScoreReply | None:
        """Score or None (not ready, disabled, timeout, crash, error): None means baseline."""
        if self.disabled or not self.ready:
            return None
        proc = self._proc
        started = time.perf_counter()
        try:
            result = self.call("score", params, timeout_s=self.score_timeout_s)
        except TimeoutError:
            self.timeouts += 1
            self._consecutive_timeouts += 1
            telemetry.record_error("predictor", "predictor_timeout", timeout_ms=self.score_timeout_s * 1000)
            telemetry.log_event("predictor", "predictor.timeout", level="warning")
            if self._consecutive_timeouts >= C.HANG_RESTART_AFTER and proc is not None:
                self._on_crash(proc, f"{self._consecutive_timeouts} consecutive score timeouts (hung)")
            return None
        except SidecarError as exc:
            telemetry.record_error("predictor", f"predictor_score_error: {exc}")
            return None
        finally:
            self.last_score_ms = (time.perf_counter() - started) * 1000.0
        self._consecutive_timeouts = 0
        telemetry.record_latency("predictor_score", self.last_score_ms)
        return cast(ScoreReply, result)  # the sidecar's `score` answer

    def state(self) -> dict[str, object]:
        return {
            "running": self.alive, "pid": self.pid, "ready": self.ready, "disabled": self.disabled,
            "crashes_last_hour": self.crashes_last_hour(), "restarts": self.restarts,
            "timeouts": self.timeouts, "parse_errors": self.parse_errors,
            "last_score_latency_ms": self.last_score_ms,
            "uptime_s": (time.monotonic() - self.started_at) if self.started_at and self.alive else 0.0,
        }


def _widen_pipes(proc: subprocess.Popen) -> None:
    """Give both pipes 1 MiB so a ~230 KB score request crosses in one write instead of four
    64 KiB round trips (each a context switch; milliseconds on a busy machine). Linux only."""
    try:
        import fcntl

        for stream in (proc.stdin, proc.stdout):
            if stream is None:
                continue
            fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError, AttributeError):
        pass  # another OS, or /proc/sys/fs/pipe-max-size is lower: the default pipe still works


def sidecar_argv(db_path: str | Path | None, checkpoint_path: Path | None, *, base_weights: Path | None = None,
                 native_dim: int = 384, extra: list[str] | None = None) -> list[str]:
    argv = [sys.executable, "-m", "kenning.predictor.sidecar", "--native-dim", str(native_dim)]
    if db_path is not None:
        argv += ["--db", str(db_path)]
    if checkpoint_path is not None:
        argv += ["--checkpoint", str(checkpoint_path)]
    if base_weights is not None:
        argv += ["--base-weights", str(base_weights)]
    return argv + list(extra or [])
