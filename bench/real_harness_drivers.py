"""One driver per real harness CLI for bench/real_harness.py: connect kenning to it, replay one chat
as one session of it, run one task prompt and return the model request it sent.

The CLIs are the pinned npm versions (bench/harnesses/clis.py) and run exactly as the real-binary tests
run them (bench/harnesses/claude_runner.py, cli_runners.py), each against its scripted local model
server (Anthropic Messages, OpenAI Responses, Gemini streamGenerateContent, OpenAI chat-completions)
that answers each user turn with the chat's own assistant turns.

How a chat is fed, per harness:
- Claude Code: one process, the user turns as stream-json lines on stdin; closing stdin ends the
  session (SessionEnd with the transcript).
- Codex CLI, Gemini CLI, OpenCode, Copilot CLI: none takes several user turns in one headless process.
  The first user turn starts the session (`codex exec`, `gemini -p --session-id`, `opencode run`,
  `copilot -p --session-id`), every later one is a new process resuming it (`codex exec resume ID`,
  `gemini -p --resume ID`, `opencode run --session ID`, `copilot -p --session-id ID`). What kenning sees is what a user who quits and resumes between
  turns produces: Gemini CLI and Copilot CLI fire their session start and end around every run (each
  end sends the whole chats file / events.jsonl; episodes are stored by position, so the re-sends add
  nothing), OpenCode's
  `session.idle` ends the kenning session after every turn (as it does in its TUI), and Codex stores
  each turn's episodes at Stop and has its session ended by the daemon once idle
  (`sessions.idle_end_minutes`, set to IDLE_END_MINUTES here instead of 30).
"""

from __future__ import annotations

import html
import re
import subprocess
import time
import uuid
from pathlib import Path

import httpx

from bench.harnesses.anthropic_server import AnthropicServer
from bench.harnesses.chat_server import ChatServer
from bench.harnesses.claude_runner import ClaudeHome, Session, run_print
from bench.harnesses.cli_runners import (
    codex_dirs, copilot_dirs, gemini_dirs, opencode_dirs, opencode_env, run_codex, run_copilot, run_gemini,
    run_opencode,
)
from bench.harnesses.clis import cli_path
from bench.harnesses.gemini_server import GeminiServer
from bench.harnesses.kenning_setup import connect
from bench.harnesses.responses_server import ResponsesServer

_BLOCK = re.compile(r"<kenning-memories>.*?</kenning-memories>", re.DOTALL)
_CLAUDE_CONTEXT = re.compile(r"(?:SessionStart|UserPromptSubmit) hook additional context: (.*?</kenning-[a-z-]+>)",
                             re.DOTALL)
IDLE_END_MINUTES = 0.5  # Codex: a session ends this long after its last turn's Stop (default 30)
TASK_ANSWER = "I will look at it."


class _KenningDaemon:
    """What `kenning connect` needs of the bench's daemon (tests' `connect(daemon=...)`)."""

    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port


class Driver:
    """A harness CLI connected to one kenning daemon. `chat` and `task` return what the bench scores."""

    name = ""  # the pin in bench/harnesses/clis.py
    harness = ""  # kenning's harness name on the session
    server_class: type = AnthropicServer
    make_dirs = None  # tests/harness/cli_runners' `*_dirs(root, project)`: the harness's home under root

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = cli_path(self.name)
        self.known: set[str] = set()
        if self.make_dirs is not None:
            self.home, _ = type(self).make_dirs(root / self.name, "scratch")

    def daemon_config(self) -> str | None:
        return None

    def connect(self, daemon_home: Path, port: int) -> None:
        raise NotImplementedError

    def run(self, server, repo: Path, prompt: str, session: str | None) -> subprocess.CompletedProcess:
        raise NotImplementedError

    def blocks(self, request_text: str) -> list[str]:
        """kenning's memory blocks in one model request, in order (session start's first)."""
        return _BLOCK.findall(request_text)

    # -- sessions, as the daemon names them (each harness's own session id) -------------------------
    def new_session(self, http: httpx.Client, project: str) -> str | None:
        listed = http.get("/api/sessions", params={"project": project, "limit": 1000}, timeout=60).json()["sessions"]
        fresh = [s["session_key"] for s in listed if s.get("harness") == self.harness and s["session_key"] not in self.known]
        self.known.update(fresh)
        return fresh[0] if len(fresh) == 1 else None

    def chat(self, http: httpx.Client, repo: Path, project: str, pairs: list[tuple[str, str]]) -> dict:
        """One session: the first user turn starts it, each later one resumes it."""
        codes: list[int] = []
        session: str | None = None
        with self.server_class() as server:
            server.script(*[answer for _, answer in pairs])
            for user, _ in pairs:
                done = self.run(server, repo, user, session)
                codes.append(done.returncode)
                if session is None:
                    session = self.first_session(http, project)
                    if session is None:
                        return {"exit": codes, "error": "no kenning session for the first turn",
                                "stderr": done.stderr[-500:]}
        return {"session": session, "exit": sorted(set(codes))}

    def first_session(self, http: httpx.Client, project: str) -> str | None:
        return self.new_session(http, project)

    def task(self, http: httpx.Client, repo: Path, project: str, prompt: str) -> tuple[int, str, str | None]:
        """One fresh session with `prompt`: (exit code, the first model request as text, its session key)."""
        with self.server_class() as server:
            server.script(TASK_ANSWER)
            done = self.run(server, repo, prompt, None)
            requests = server.model_requests()
        return done.returncode, (requests[0].text() if requests else ""), self.new_session(http, project)

    def settle(self, http: httpx.Client, keys: list[str], limit_s: float = 180.0) -> dict:
        """Wait until the chat sessions have ended (harnesses whose sessions end later than their last run)."""
        return {}


class ClaudeCode(Driver):
    name = harness = "claude-code"

    def connect(self, daemon_home: Path, port: int) -> None:
        self.home = ClaudeHome(self.root / "claude-home")
        done = self.home.connect({"KENNING_HOME": str(daemon_home), "KENNING_PORT": str(port)})
        if done.returncode != 0:
            raise RuntimeError(f"kenning connect claude-code failed: {done.stderr[-300:]}")

    def blocks(self, request_text: str) -> list[str]:
        return _CLAUDE_CONTEXT.findall(request_text)

    def chat(self, http: httpx.Client, repo: Path, project: str, pairs: list[tuple[str, str]]) -> dict:
        with AnthropicServer() as server:  # one process, the turns as stream-json
            server.script(*[answer for _, answer in pairs])
            with Session(self.bin, self.home, repo, server.url) as session:
                for user, _ in pairs:
                    session.turn(user)
                code = session.close()
        self.known.add(session.session_id)
        return {"session": session.session_id, "exit": [code]}

    def task(self, http: httpx.Client, repo: Path, project: str, prompt: str) -> tuple[int, str, str | None]:
        with AnthropicServer() as server:
            server.script(TASK_ANSWER)
            code, lines, _ = run_print(self.bin, self.home, repo, server.url, prompt)
            requests = server.model_requests()
        session = next((line.get("session_id") for line in lines if line.get("session_id")), None)
        return code, (requests[0].text() if requests else ""), session


class Codex(Driver):
    name = harness = "codex"
    server_class = ResponsesServer
    make_dirs = staticmethod(codex_dirs)

    def daemon_config(self) -> str:
        return (f"sessions:\n  idle_end_minutes: {IDLE_END_MINUTES}\n  idle_check_s: 2\n"
                f"  transcript_roots:\n    - {self.home / 'sessions'}\n")

    def connect(self, daemon_home: Path, port: int) -> None:
        connect("codex", daemon=_KenningDaemon(daemon_home, port), CODEX_HOME=str(self.home),
                KENNING_CODEX_BIN=str(self.bin))

    def run(self, server, repo: Path, prompt: str, session: str | None) -> subprocess.CompletedProcess:
        return run_codex(self.bin, self.home, repo, server, prompt, resume=session)

    def settle(self, http: httpx.Client, keys: list[str], limit_s: float = 180.0) -> dict:
        began = time.monotonic()
        left = list(keys)
        while left and time.monotonic() - began < limit_s:
            left = [k for k in left if http.get(f"/api/sessions/{k}", timeout=60).json()["session"]["status"] != "ended"]
            if left:
                time.sleep(2)
        return {"idle_end_waited_s": round(time.monotonic() - began, 1), "not_ended": len(left)}


class Gemini(Driver):
    name, harness = "gemini", "gemini"
    server_class = GeminiServer
    make_dirs = staticmethod(gemini_dirs)
    _next_id: str | None = None

    def blocks(self, request_text: str) -> list[str]:
        """Gemini CLI sends hook context HTML-escaped (`<hook_context>&lt;kenning-memories&gt;…`)."""
        return _BLOCK.findall(html.unescape(request_text))

    def connect(self, daemon_home: Path, port: int) -> None:
        connect("gemini", daemon=_KenningDaemon(daemon_home, port), HOME=str(self.home))

    def run(self, server, repo: Path, prompt: str, session: str | None) -> subprocess.CompletedProcess:
        if session:
            return run_gemini(self.bin, self.home, repo, server, prompt, resume=session)
        self._next_id = str(uuid.uuid4())
        return run_gemini(self.bin, self.home, repo, server, prompt, session_id=self._next_id)

    def first_session(self, http: httpx.Client, project: str) -> str | None:
        key = self.new_session(http, project)
        return key if key == self._next_id else None  # the hooks' session id is the one the run was given


class OpenCode(Driver):
    name = harness = "opencode"
    server_class = ChatServer
    make_dirs = staticmethod(opencode_dirs)

    def connect(self, daemon_home: Path, port: int) -> None:
        connect("opencode", daemon=_KenningDaemon(daemon_home, port), **opencode_env(self.home))

    def run(self, server, repo: Path, prompt: str, session: str | None) -> subprocess.CompletedProcess:
        return run_opencode(self.bin, self.home, repo, server, prompt, session=session)


class Copilot(Driver):
    name = harness = "copilot"
    server_class = ChatServer
    make_dirs = staticmethod(copilot_dirs)
    _next_id: str | None = None

    def daemon_config(self) -> str:  # the daemon's HOME is not this Copilot CLI's: name its session-state folder,
        # so the summary reads events.jsonl once Copilot CLI has finished it (sessions.late_transcript, issue 37)
        return f"sessions:\n  transcript_roots:\n    - {self.home / '.copilot' / 'session-state'}\n"

    def connect(self, daemon_home: Path, port: int) -> None:
        connect("copilot", daemon=_KenningDaemon(daemon_home, port), HOME=str(self.home))

    def run(self, server, repo: Path, prompt: str, session: str | None) -> subprocess.CompletedProcess:
        if session:
            return run_copilot(self.bin, self.home, repo, server, prompt, session_id=session)
        self._next_id = str(uuid.uuid4())
        return run_copilot(self.bin, self.home, repo, server, prompt, session_id=self._next_id)

    def first_session(self, http: httpx.Client, project: str) -> str | None:
        key = self.new_session(http, project)
        return key if key == self._next_id else None  # the hooks' session id is the one the run was given


DRIVERS: dict[str, type[Driver]] = {"claude-code": ClaudeCode, "codex": Codex, "gemini": Gemini, "opencode": OpenCode,
                                    "copilot": Copilot}
