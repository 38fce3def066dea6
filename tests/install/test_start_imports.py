"""What a daemon's start-up imports: the app is built and started (store, model, workers) without
the packages only some requests use (the torch stack, networkx, BeautifulSoup, detect-secrets and requests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kenning.hooks.install import hook_argv

NOT_AT_START = ("torch", "sentence_transformers", "transformers", "onnx", "networkx", "bs4", "detect_secrets",
                "requests", "tree_sitter_python", "psycopg", "schemathesis", "playwright")
PROBE = (
    "import json, sys\n"
    "from kenning.api.app import create_app\n"
    "from kenning.core.config import load_settings\n"
    "from fastapi.testclient import TestClient\n"
    "with TestClient(create_app(load_settings()), base_url='http://127.0.0.1') as client:\n"  # runs the start-up: store, model, workers
    "    assert client.get('/api/health').status_code == 200\n"
    "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
)


def test_starting_the_daemon_app_imports_none_of_the_heavy_optional_packages(tmp_path):
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "fastapi" in loaded and "kenning" in loaded  # the probe did build and start the app
    assert not loaded & set(NOT_AT_START), sorted(loaded & set(NOT_AT_START))


# -- the hook process (issue 36): it imports what sending the event needs, nothing more --------------
HOOK_NEVER = (  # modules a hook that reached its daemon must not load: each cost milliseconds of every agent turn
    "typing", "dataclasses", "inspect", "secrets", "hashlib", "random", "pathlib", "shutil", "urllib", "http",
    "email", "ssl", "encodings.idna", "unicodedata", "yaml", "pydantic", "httpx",
    "socket", "selectors", "importlib", "warnings",  # the hook speaks to `_socket`; adapters load by __import__
    "json", "re", "enum", "functools", "collections",  # JSON on the C codec (hooks/jsonc.py): no `re` and what it loads
    "kenning.hooks.install", "kenning.hooks.plugin", "kenning.hooks.spool", "kenning.hooks.transcript_file",
    "kenning.hooks.claude_code",  # the re-export module: the entry imports the adapter itself
    "kenning.core",  # nothing of core: not even core.spool while the spool folder is empty (the usual case)
    "kenning.sessions",
)
HOOK_KENNING = {"kenning", "kenning.hooks", "kenning.hooks.adapters",  # (cli/entry.py runs as the script: __main__)
                "kenning.hooks.adapters.hookrun", "kenning.hooks.adapters.claude_code", "kenning.hooks.transport",
                "kenning.hooks.jsonc"}
HOOK_STDLIB = {"__future__", "_json", "_socket", "select"}  # C modules past what `python -c pass` loads


def _hook_modules(event: str, stdin: dict, env: dict[str, str]) -> tuple[set[str], str]:
    """The modules the hook command `kenning connect` installs imported for `event` (from -X importtime,
    which lists each once), and its stdout."""
    python, *rest = hook_argv()
    assert python == sys.executable and rest[0] == "-P", hook_argv()  # not pip's console script (it imports `re`)
    done = subprocess.run([python, "-X", "importtime", *rest, "hook", event],
                          input=json.dumps(stdin), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and line.count("|") == 2}
    modules.discard("package")  # the header line
    assert "kenning.hooks.transport" in modules  # the probe did run the hook
    return modules, done.stdout


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_a_hook_that_reaches_its_daemon_imports_only_what_sending_the_event_needs(daemon, tmp_path):
    baseline = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
    at_start = {line.rsplit("|", 1)[1].strip() for line in baseline.stderr.splitlines() if line.count("|") == 2}
    home = tmp_path / "home"  # its own home: an empty spool, as a hook usually finds it
    home.mkdir()
    env = {**daemon.env, "KENNING_HOME": str(home), "KENNING_URL": daemon.base_url, "KENNING_HOOK_VIA": ""}
    (tmp_path / ".git").mkdir()
    start = {"session_id": "imports-1", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup",
             "transcript_path": str(tmp_path / "t.jsonl")}
    modules, _ = _hook_modules("session-start", start, env)
    assert not _loaded(modules, HOOK_NEVER), _loaded(modules, HOOK_NEVER)
    prompt = {**start, "hook_event_name": "UserPromptSubmit", "prompt": "how do we deploy the api?"}
    modules, _ = _hook_modules("user-prompt-submit", prompt, env)
    assert not _loaded(modules, HOOK_NEVER), _loaded(modules, HOOK_NEVER)
    assert {m for m in modules if m.startswith("kenning")} == HOOK_KENNING, sorted(modules - at_start)
    assert modules - at_start - HOOK_KENNING <= HOOK_STDLIB, sorted(modules - at_start - HOOK_KENNING - HOOK_STDLIB)


def test_the_spool_and_the_plugin_check_load_only_when_they_have_work(daemon, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    down = {**daemon.env, "KENNING_HOME": str(home), "KENNING_URL": "http://127.0.0.1:9", "KENNING_HOOK_TIMEOUT": "1"}
    prompt = {"session_id": "imports-2", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
              "prompt": "where is the release checklist?"}
    modules, out = _hook_modules("user-prompt-submit", prompt, down)  # no daemon there: the event is spooled
    assert out == "" and "kenning.hooks.spool" in modules
    assert list((home / "spool").glob("e-*.json")), "the undelivered event was not spooled"
    up = {**daemon.env, "KENNING_HOME": str(home), "KENNING_URL": daemon.base_url}
    modules, _ = _hook_modules("user-prompt-submit", prompt, up)  # a daemon elsewhere: this home's spool is handed over
    assert "kenning.hooks.spool" in modules
    assert not list((home / "spool").glob("e-*.json")), "the waiting event was not handed to the daemon"
    modules, _ = _hook_modules("user-prompt-submit", prompt, up)  # nothing waits any more: no spool code
    assert "kenning.hooks.spool" not in modules
    modules, _ = _hook_modules("user-prompt-submit", prompt, {**up, "KENNING_HOOK_VIA": "plugin",
                                                             "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")})
    assert "kenning.hooks.plugin" in modules  # the plugin's own hook asks whether it should stand down
