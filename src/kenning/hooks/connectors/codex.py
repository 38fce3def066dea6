"""`kenning connect codex`: Codex CLI hooks in `$CODEX_HOME/hooks.json` (or a project's
`.codex/hooks.json`), recorded as trusted in `$CODEX_HOME/config.toml`.

Codex skips hooks that are not trusted, silently. Trust is a `[hooks.state."<hooks.json
path>:<event_snake>:<group>:<handler>"] trusted_hash = "sha256:…"` table in config.toml; the
hash is Codex's own (it changes with the command), so we ask the real binary: `codex
app-server`'s `hooks/list` returns each hook's key and `currentHash`. The tables we add sit in
one marked block at the end of config.toml; uninstall removes the block (the file comes back
byte for byte). When no codex binary is found the user is told the one command that trusts
them (`kenning connect codex --trust`).

Codex has no session-end event: a session ends after its last turn's Stop plus an idle time
(the daemon's side: `sessions.idle_end_minutes`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from kenning.hooks.connectors.hookjson import HookSpec, install_hooks, installed_commands, uninstall_hooks
from kenning.hooks.install import InstallError, Outcome, is_ours

HARNESS = "codex"
SPECS = (
    HookSpec("SessionStart", 10),
    HookSpec("UserPromptSubmit", 10),
    HookSpec("PostToolUse", 5),
    HookSpec("PreCompact", 30),
    HookSpec("Stop", 30),  # the turn's transcript goes to the daemon (Codex never says the session ended)
)
BEGIN = "# >>> kenning: trust for kenning's Codex hooks (`kenning connect codex --uninstall` removes this block)"
END = "# <<< kenning"
_BLOCK = re.compile(r"\n*" + re.escape(BEGIN) + r"\n.*?" + re.escape(END) + r"\n?", re.DOTALL)
APP_SERVER_TIMEOUT_S = 30.0


def codex_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("CODEX_HOME") or Path.home() / ".codex").expanduser()


def hooks_path(project: Path | None, environ: dict[str, str] | None = None) -> Path:
    return project / ".codex" / "hooks.json" if project is not None else codex_home(environ) / "hooks.json"


def find_codex(explicit: str | None = None) -> str | None:
    return explicit or os.environ.get("KENNING_CODEX_BIN") or shutil.which("codex")


# -- hooks/list through `codex app-server` (JSON-RPC over stdio) ---------------------------------
def list_hooks(codex: str, home: Path, cwd: Path, timeout: float = APP_SERVER_TIMEOUT_S) -> list[dict[str, object]]:
    """Every hook Codex sees for `cwd` (key, command, currentHash, trustStatus, sourcePath…), as Codex
    wrote it: its JSON, each field read with isinstance."""
    requests = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "kenning", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    proc = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=str(cwd),
                            env={**os.environ, "CODEX_HOME": str(home)})
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        answer = _read_reply(proc, 2, timeout)
    finally:
        proc.kill()
        proc.wait()
    if "error" in answer:
        raise InstallError(f"codex app-server hooks/list failed: {answer['error']}")
    result = answer.get("result", {})
    data = result.get("data", []) if isinstance(result, dict) else []
    return [hook for entry in data if isinstance(entry, dict) for hook in entry.get("hooks", []) if isinstance(hook, dict)]


def _read_reply(proc: subprocess.Popen[str], request_id: int, timeout: float) -> dict[str, object]:
    """The JSON-RPC answer to `request_id` (other messages — notifications — are passed over)."""
    import queue
    import threading

    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise InstallError("codex app-server did not answer hooks/list in time") from None
        if not line:
            raise InstallError("codex app-server exited before answering hooks/list")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == request_id:
            return message


# -- the trust block in config.toml --------------------------------------------------------------
@dataclass
class TrustResult:
    trusted: list[str] = field(default_factory=list)  # hook keys we recorded as trusted
    already: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _without_block(text: str) -> str:
    return _BLOCK.sub("\n", text).rstrip("\n") + "\n" if BEGIN in text else text


def trust(codex: str, home: Path, cwd: Path, hooks_file: Path) -> TrustResult:
    """Record our hooks in `hooks_file` as trusted (their hashes from `codex app-server`)."""
    result = TrustResult()
    wanted: dict[str, str] = {}
    for hook in list_hooks(codex, home, cwd):
        key, digest = hook.get("key"), hook.get("currentHash")
        if not isinstance(key, str) or not isinstance(digest, str):
            continue
        if Path(str(hook.get("sourcePath") or "")).resolve() != hooks_file.resolve():
            continue
        if not is_ours({"command": hook.get("command")}):
            continue
        (result.already if hook.get("trustStatus") == "trusted" else result.trusted).append(key)
        wanted[key] = digest
    if not wanted:
        result.problems.append(f"Codex lists none of kenning's hooks from {hooks_file} for {cwd}"
                               + (" (a project's hooks load only once Codex trusts the project)"
                                  if hooks_file.parent.name == ".codex" and hooks_file.parent.parent != home else ""))
        return result
    config = home / "config.toml"
    original = config.read_bytes() if config.exists() else None
    base = _without_block(original.decode("utf-8")) if original is not None else ""
    taken = _table_keys(base)
    clashes = [key for key in wanted if key in taken]
    if clashes:
        result.problems.append(f"{config} already has [hooks.state] tables for {', '.join(clashes)}; "
                               "trust kenning's hooks in Codex (/hooks) instead")
        return result
    lines = [BEGIN]
    for key, digest in sorted(wanted.items()):
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}"]
    lines.append(END)
    new_text = (base.rstrip("\n") + "\n\n" if base.strip() else "") + "\n".join(lines) + "\n"
    try:
        tomllib.loads(new_text)
    except tomllib.TOMLDecodeError as exc:
        result.problems.append(f"{config} would not stay valid TOML ({exc}); nothing was changed")
        return result
    _save_config_original(config, original)
    config.parent.mkdir(parents=True, exist_ok=True)
    tmp = config.with_name(config.name + ".kenning-tmp")
    tmp.write_text(new_text, encoding="utf-8")
    os.replace(tmp, config)
    return result


def _table_keys(text: str) -> set[str]:
    try:
        state = tomllib.loads(text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"config.toml is not valid TOML ({exc}); fix it first, nothing was changed") from exc
    return set(state) if isinstance(state, dict) else set()


def _save_config_original(config: Path, original: bytes | None) -> None:
    backup, created = config.with_name(config.name + ".kenning-backup"), config.with_name(config.name + ".kenning-created")
    if backup.exists() or created.exists() or (original is not None and BEGIN.encode() in original):
        return
    if original is None:
        config.parent.mkdir(parents=True, exist_ok=True)
        created.write_bytes(b"")
    else:
        backup.write_bytes(original)


def untrust(home: Path) -> Outcome:
    """Remove our block from config.toml; the original bytes come back when nothing else changed."""
    config = home / "config.toml"
    backup, created = config.with_name(config.name + ".kenning-backup"), config.with_name(config.name + ".kenning-created")
    if not config.exists():
        return Outcome(config, False, f"{config} does not exist")
    text = config.read_text(encoding="utf-8")
    if BEGIN not in text:
        return Outcome(config, False, f"no kenning trust block in {config}")
    rest = _without_block(text)
    if backup.exists() and rest.strip("\n") == backup.read_text(encoding="utf-8").strip("\n"):
        config.write_bytes(backup.read_bytes())
        backup.unlink()
        return Outcome(config, True, f"removed kenning's hook trust from {config}; original restored byte-for-byte")
    if created.exists() and not rest.strip():
        config.unlink()
        created.unlink()
        return Outcome(config, True, f"removed {config} (kenning had created it)")
    config.write_text(rest, encoding="utf-8")
    return Outcome(config, True, f"removed kenning's hook trust from {config} (other edits kept)")


# -- the connector -------------------------------------------------------------------------------
def install(project: Path | None, env: dict[str, str] | None, codex: str | None,
            environ: dict[str, str] | None = None) -> list[str]:
    """Install the hooks and trust them; the lines to tell the user."""
    path = hooks_path(project, environ)
    messages = [install_hooks(path, HARNESS, SPECS, env).message]
    messages += trust_messages(project, codex, environ)
    return messages


def trust_messages(project: Path | None, codex: str | None, environ: dict[str, str] | None = None) -> list[str]:
    home = codex_home(environ)
    path = hooks_path(project, environ)
    binary = find_codex(codex)
    how = "kenning connect codex --trust" + (" --project" if project is not None else "")
    if binary is None:
        return [f"Codex skips hooks it does not trust: once `codex` is on PATH run `{how}` "
                "(or trust them in Codex with /hooks)."]
    try:
        result = trust(binary, home, project or Path.cwd(), path)
    except (InstallError, OSError) as exc:
        return [f"could not record the hooks as trusted ({exc}); run `{how}` or trust them in Codex with /hooks"]
    if result.problems:
        return [*result.problems, f"then run `{how}`"]
    if result.trusted:
        return [f"recorded {len(result.trusted)} kenning hook(s) as trusted in {home / 'config.toml'}"]
    return [f"kenning's Codex hooks were already trusted ({len(result.already)})"]


def uninstall(project: Path | None, environ: dict[str, str] | None = None) -> list[str]:
    """Remove the hooks; the trust block goes too once no kenning hook is left (user's or this project's)."""
    messages = [uninstall_hooks(hooks_path(project, environ)).message]
    left = installed_commands(hooks_path(None, environ)) or installed_commands(hooks_path(project or Path.cwd()))
    if not left:
        messages.append(untrust(codex_home(environ)).message)
    return messages
