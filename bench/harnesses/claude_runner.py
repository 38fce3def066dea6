"""Run the real Claude Code CLI headless against a scripted Anthropic server (tests and bench).

`ClaudeHome(root)` is a throwaway $HOME (Claude Code's settings live in `$HOME/.claude`).
`run_print(...)` is one `claude -p PROMPT`; `Session(...)` is one multi-turn session fed as
stream-json (`--input-format stream-json`), one user line per turn, each turn read up to its
`result` line, so the caller can act between turns (store a memory, look at the daemon).
Closing the session (stdin EOF) makes Claude Code exit and fire SessionEnd.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harnesses.anthropic_server import claude_env

KENNING = str(Path(sys.executable).with_name("kenning"))
TURN_TIMEOUT_S = 120.0
ALLOWED_TOOLS = "Bash,Read,Write,Edit,Glob,Grep"


@dataclass
class ClaudeHome:
    root: Path

    def __post_init__(self) -> None:
        (self.root / ".claude").mkdir(parents=True, exist_ok=True)

    @property
    def settings(self) -> Path:
        return self.root / ".claude" / "settings.json"

    def connect(self, kenning_env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """`kenning connect claude-code [args]` as the user would run it, with this HOME."""
        env = {**os.environ, **kenning_env, "HOME": str(self.root)}
        return subprocess.run([KENNING, "connect", "claude-code", *args], env=env, cwd=cwd or self.root,
                              capture_output=True, text=True, timeout=120)

    def transcripts(self) -> list[Path]:
        return sorted((self.root / ".claude" / "projects").glob("*/*.jsonl"))


def _lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def run_print(claude: Path, home: ClaudeHome, cwd: Path, server_url: str, prompt: str,
              timeout: float = TURN_TIMEOUT_S, env: dict[str, str] | None = None) -> tuple[int, list[dict[str, Any]], str]:
    """One `claude -p PROMPT --output-format stream-json --verbose`: (exit code, stream lines, stderr)."""
    done = subprocess.run(
        [str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", ALLOWED_TOOLS],
        cwd=cwd, env=claude_env(server_url, str(home.root), env), capture_output=True, text=True, timeout=timeout,
    )
    return done.returncode, _lines(done.stdout), done.stderr


@dataclass
class Session:
    """One multi-turn headless session: `turn(text)` → the stream lines of that turn."""

    claude: Path
    home: ClaudeHome
    cwd: Path
    server_url: str
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    env: dict[str, str] | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)

    def __enter__(self) -> "Session":
        self.proc = subprocess.Popen(
            [str(self.claude), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
             "--session-id", self.session_id, "--allowedTools", ALLOWED_TOOLS],
            cwd=self.cwd, env=claude_env(self.server_url, str(self.home.root), self.env),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        )
        self._stderr: list[str] = []
        threading.Thread(target=lambda: self._stderr.extend(self.proc.stderr), daemon=True).start()
        return self

    def turn(self, text: str, timeout: float = TURN_TIMEOUT_S) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n")
        self.proc.stdin.flush()
        got: list[dict[str, Any]] = []
        timer = threading.Timer(timeout, self.proc.kill)
        timer.start()
        try:
            for line in self.proc.stdout:
                item = _lines(line)
                got.extend(item)
                if item and item[0].get("type") == "result":
                    break
            else:
                raise AssertionError(f"claude exited mid-turn: {''.join(self._stderr)[-2000:]}")
        finally:
            timer.cancel()
        self.lines.extend(got)
        return got

    def close(self, timeout: float = TURN_TIMEOUT_S) -> int:
        """End the session (stdin EOF): Claude Code fires SessionEnd and exits; its exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            rest = self.proc.stdout.read() if self.proc.stdout else ""
            self.lines.extend(_lines(rest))
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close()
            except Exception:  # noqa: BLE001 - cleanup
                self.proc.kill()

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)
