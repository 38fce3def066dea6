"""Run Codex CLI, Gemini CLI, OpenCode and GitHub Copilot CLI headless against their scripted model
servers (tests and bench/real_harness.py; Claude Code's runner is claude_runner.py).

Each `run_*` is one headless run of the real CLI, one user prompt, in `work` (the project folder),
with the harness's home inside the caller's temp folder. None of the four takes several user
turns in one headless process, so a multi-turn conversation is one run per user turn, each later
run resuming the session the first one started:

- Codex: `codex exec PROMPT`, then `codex exec resume SESSION_ID PROMPT`;
- Gemini CLI: `gemini -p PROMPT --session-id UUID` (the caller picks the id), then `--resume UUID`;
- OpenCode: `opencode run PROMPT`, then `opencode run --session SESSION_ID PROMPT`;
- Copilot CLI: `copilot -p PROMPT --session-id UUID` (the caller picks the id; the same flag resumes it).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bench.harnesses.chat_server import OPENCODE_ENV, ChatServer, opencode_config
from bench.harnesses.gemini_server import GeminiServer, gemini_env, gemini_settings
from bench.harnesses.kenning_setup import bare_env
from bench.harnesses.responses_server import ResponsesServer, codex_config

RUN_TIMEOUT_S = 240


# -- Codex ------------------------------------------------------------------------------------------
def codex_dirs(root: Path, name: str) -> tuple[Path, Path]:
    """(CODEX_HOME = root/home/.codex, the project folder root/name), both made."""
    home, work = root / "home" / ".codex", root / name
    home.mkdir(parents=True)
    work.mkdir(exist_ok=True)
    return home, work


def run_codex(codex_bin: Path, home: Path, work: Path, server: ResponsesServer, prompt: str,
              resume: str | None = None, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
    """One headless `codex exec` (or `codex exec resume <resume>`) with the model calls sent to
    `server` (config.toml gets the provider for the run and is put back after it)."""
    config = home / "config.toml"
    before = config.read_bytes() if config.exists() else None
    config.write_text(codex_config(server.url) + "\n" + (before or b"").decode())
    command = [str(codex_bin), "exec", "--skip-git-repo-check"] + (["resume", resume] if resume else []) + [prompt]
    try:
        return subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=timeout,
                              env=bare_env(CODEX_HOME=str(home), HOME=str(home.parent), FAKE_API_KEY="sk-test"))
    finally:
        if before is None:
            config.unlink()
        else:
            config.write_bytes(before)


# -- Gemini CLI -------------------------------------------------------------------------------------
def gemini_dirs(root: Path, name: str, settings: str | None = None) -> tuple[Path, Path]:
    """(HOME = root/home with .gemini/settings.json for a headless offline run, the project folder)."""
    home, work = root / "home", root / name
    (home / ".gemini").mkdir(parents=True)
    work.mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(settings or json.dumps(gemini_settings(), indent=2))
    return home, work


def run_gemini(gemini_bin: Path, home: Path, work: Path, server: GeminiServer, prompt: str,
               session_id: str | None = None, resume: str | None = None,
               timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
    """One headless `gemini --yolo -p PROMPT` (a new session `session_id`, or resuming `resume`)."""
    extra = ["--session-id", session_id] if session_id else []
    extra += ["--resume", resume] if resume else []
    return subprocess.run([str(gemini_bin), "--yolo", *extra, "-p", prompt], cwd=work, capture_output=True, text=True,
                          timeout=timeout, env=bare_env(HOME=str(home), **gemini_env(server.url)))


# -- OpenCode ---------------------------------------------------------------------------------------
def opencode_env(home: Path) -> dict[str, str]:
    """HOME and the XDG folders OpenCode (and the connector) use, all inside `home`."""
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state")}


def opencode_dirs(root: Path, name: str) -> tuple[Path, Path]:
    home, work = root / "home", root / name
    (home / ".config" / "opencode").mkdir(parents=True)
    work.mkdir(exist_ok=True)
    return home, work


def run_opencode(opencode_bin: Path, home: Path, work: Path, server: ChatServer, prompt: str,
                 session: str | None = None, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
    """One `opencode run PROMPT` (continuing `session` when given); opencode.json points at `server`
    for the run only. OpenCode takes its directory from PWD."""
    config = home / ".config" / "opencode" / "opencode.json"
    config.write_text(json.dumps(opencode_config(server.url)))
    extra = ["--session", session] if session else []
    try:
        return subprocess.run([str(opencode_bin), "run", *extra, prompt], cwd=work, capture_output=True, text=True,
                              timeout=timeout, env=bare_env(PWD=str(work), **opencode_env(home), **OPENCODE_ENV))
    finally:
        config.unlink()


# -- GitHub Copilot CLI -----------------------------------------------------------------------------
def copilot_dirs(root: Path, name: str, settings: str | None = None) -> tuple[Path, Path]:
    """(HOME = root/home with an empty .copilot, or `settings` as its settings.json; the project folder)."""
    home, work = root / "home", root / name
    (home / ".copilot").mkdir(parents=True)
    work.mkdir(exist_ok=True)
    if settings is not None:
        (home / ".copilot" / "settings.json").write_text(settings)
    return home, work


def copilot_env(server_url: str) -> dict[str, str]:
    """Offline, every model call to `server_url` (OpenAI chat completions), no update check."""
    return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{server_url}/v1",
            "COPILOT_PROVIDER_API_KEY": "sk-test", "COPILOT_MODEL": "fake-model", "COPILOT_AUTO_UPDATE": "false"}


def run_copilot(copilot_bin: Path, home: Path, work: Path, server: ChatServer, prompt: str,
                session_id: str | None = None, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
    """One headless `copilot -p PROMPT --allow-all-tools` (new session `session_id`, or resuming it)."""
    extra = ["--session-id", session_id] if session_id else []
    return subprocess.run([str(copilot_bin), "-p", prompt, "--allow-all-tools", *extra], cwd=work,
                          capture_output=True, text=True, timeout=timeout,
                          env=bare_env(HOME=str(home), **copilot_env(server.url)))
