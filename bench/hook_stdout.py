"""Every harness's hook stdout over the recorded payload samples, against a real daemon (issue 34).

    PYTHONPATH=/tmp/before-s32/src .venv/bin/python bench/hook_stdout.py --out /tmp/hook-stdout-before.json
    .venv/bin/python bench/hook_stdout.py --compare /tmp/hook-stdout-before.json   # exit 1 on any difference

A refactor of the hook corridor (adapters → route → hooks service → sessions / observer / code graph) must not
change what a harness reads back. For each harness (claude-code, codex, gemini, opencode, copilot) a fresh daemon
(`python -m kenning serve`, the code on PYTHONPATH) gets the same few memories, then the harness's hook
(`kenning hook [harness] <event>`, a real process) is fed each payload sample of `../shared/harness/<harness>/`
in a session's order (start, prompts, tools, turn ends, compaction, end). Its stdout and exit code are recorded,
and (an `http:N` record per hook) every request it sent and the daemon's answer as the daemon wrote it — status and
JSON bytes — through a forwarding recorder between hook and daemon.

Samples: Claude Code, Codex and Gemini CLI send their JSON files as they are; Copilot CLI's start/prompt/end JSON
as they are; OpenCode's are the plugin's hook inputs (`hook_payloads_first_of_each.jsonl`,
`toolcall_run_all_hooks.jsonl`), turned into what kenning's plugin sends (hooks/connectors/opencode_plugin.js):
session.created, chat.message {prompt}, tool.execute.after {tool, call_id, args, title, output, metadata},
session.idle. Paths under `/home/dev` point into a temporary HOME (Claude Code's transcript sample is put where its
payloads say). Three payloads of our own are added so the success path of a tool is covered: a Claude Code
PostToolUse per PreToolUse sample (`tool_response` {stdout, stderr, interrupted}), one whose Bash output carries a
traceback with exit 0, and an Edit of a file.

Normalised (inherently variable, nothing else): memory ids (random per store; each is replaced by `<id:N>`, N its
order of first appearance in the run) and ISO timestamps / dates in injected text (`<time>`). The daemon runs with a
large latency budget (no answer is cut by the machine's load) and without extraction workers (their timing would
change the store between two hooks).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.harnesses (PYTHONPATH may name another src)
from bench.harnesses.daemon import start_daemon  # noqa: E402

HARNESS_DIR = Path(__file__).resolve().parents[2] / "shared" / "harness"
HARNESSES = ("claude-code", "codex", "gemini", "opencode", "copilot")
CONFIG = ("pipeline:\n  enabled: false\n"
          "sessions:\n  latency_budget_ms: 30000\n  hook_timeout_s: 60\n")
MEMORIES = [  # (content, type, applies): what the sessions may be shown
    ("Deploys go through scripts/ship.sh; never push to main directly.", "constraint", "project"),
    ("Run the test suite with `make test` before every commit in this repository.", "constraint", "project"),
    ("The crash script divides by zero when its input list is empty: guard the division with a length check.",
     "gotcha", None),
    ("ZeroDivisionError in the report script comes from an empty sample list; the fix is an early return.",
     "error_pattern", None),
    ("`echo hi && cat notes.txt` prints the greeting and the notes file; notes.txt holds the team's scratch notes.",
     "fact", None),
    ("We decided to keep deploy notes in docs/deploys.md, one section per service.", "decision", None),
]
PROJECTS = ("proj", "acme-pay")
_ID = re.compile(r"\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}|"
                 r"[0-9a-f]{12,16})\b")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?")


def lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    text = path.read_text()
    if path.suffix == ".json":
        return [json.loads(text)]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def rewrite(value: object, home: Path) -> object:
    """The sample with `/home/dev` paths under this run's HOME."""
    return json.loads(json.dumps(value).replace("/home/dev", str(home)))


def claude_code(home: Path) -> list[tuple[str, dict[str, object]]]:
    d = HARNESS_DIR / "claude-code"
    out: list[tuple[str, dict[str, object]]] = []
    for event, name in (("session-start", "SessionStart"), ("user-prompt-submit", "UserPromptSubmit")):
        out += [(event, p) for p in lines(d / f"{name}.jsonl")]
    for pre in lines(d / "PreToolUse.jsonl"):  # our own: the success path of the same call
        post = {**pre, "hook_event_name": "PostToolUse",
                "tool_response": {"stdout": "hi\nhello file", "stderr": "", "interrupted": False}}
        out.append(("post-tool-use", post))
    if out:
        base = {k: out[0][1][k] for k in ("session_id", "transcript_path", "cwd")}
        out.append(("post-tool-use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                      "tool_input": {"command": "python3 report.py || true"},
                                      "tool_response": {"stdout": "Traceback (most recent call last):\n"
                                                        "ZeroDivisionError: division by zero", "stderr": "",
                                                        "interrupted": False}}))
        out.append(("post-tool-use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
                                      "tool_input": {"file_path": "report.py", "old_string": "a", "new_string": "b"},
                                      "tool_response": {"filePath": "report.py"}}))
    out += [("post-tool-use-failure", p) for p in lines(d / "PostToolUseFailure.jsonl")]
    out += [("stop", p) for p in lines(d / "Stop.jsonl")]
    out += [("session-end", p) for p in lines(d / "SessionEnd.jsonl")]
    transcript = d / "transcript-sample.jsonl"
    for _, payload in out:  # the transcript where the payloads say it is
        path = payload.get("transcript_path")
        if isinstance(path, str) and path.startswith("/home/dev") and transcript.exists():
            target = Path(str(rewrite(path, home)))
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copyfile(transcript, target)
    return out


def by_name(harness: str, order: tuple[str, ...]) -> list[tuple[str, dict[str, object]]]:
    d = HARNESS_DIR / harness
    return [(name, p) for name in order for p in lines(d / f"{name}.jsonl")]


def opencode() -> list[tuple[str, dict[str, object]]]:
    """The plugin's hook inputs as kenning's plugin hands them to `kenning hook opencode <event>`."""
    d = HARNESS_DIR / "opencode"
    out: list[tuple[str, dict[str, object]]] = []
    for sample in ("hook_payloads_first_of_each.jsonl", "toolcall_run_all_hooks.jsonl"):
        rows = lines(d / sample)
        directory = next((r["input"].get("directory") for r in rows if r.get("hook") == "plugin.init"), None)
        started: set[str] = set()
        for row in rows:
            hook, given, output = row.get("hook"), row.get("input") or {}, row.get("output") or {}
            props = given.get("properties") or {}
            sid = given.get("sessionID") or props.get("sessionID")
            if not isinstance(sid, str):
                continue
            base = {"session_id": sid, "cwd": directory}
            if hook == "chat.message":
                if sid not in started:
                    started.add(sid)
                    out.append(("session.created", base))
                parts = output.get("parts") or []
                prompt = "\n".join(p["text"] for p in parts if p.get("type") == "text" and not p.get("synthetic"))
                out.append(("chat.message", {**base, "prompt": prompt}))
            elif hook == "tool.execute.after":
                out.append(("tool.execute.after", {**base, "tool": given.get("tool"), "call_id": given.get("callID"),
                                                   "args": given.get("args"), "title": output.get("title"),
                                                   "output": output.get("output"), "metadata": output.get("metadata")}))
            elif hook == "event:session.idle":
                out.append(("session.idle", {**base, "reason": "idle", "messages": []}))
    return out


def copilot() -> list[tuple[str, dict[str, object]]]:
    d = HARNESS_DIR / "copilot"
    return [(event, p) for event, name in (("sessionStart", "start"), ("userPromptSubmitted", "prompt"),
                                           ("sessionEnd", "end")) for p in lines(d / f"{name}.json")]


def payloads(harness: str, home: Path) -> list[tuple[str, dict[str, object]]]:
    if harness == "claude-code":
        found = claude_code(home)
    elif harness == "codex":
        found = by_name("codex", ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"))
    elif harness == "gemini":
        found = by_name("gemini", ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress",
                                   "SessionEnd"))
    elif harness == "opencode":
        found = opencode()
    else:
        found = copilot()
    return [(event, rewrite(p, home)) for event, p in found]  # type: ignore[misc]


class Normaliser:
    """Memory ids → `<id:N>` (first appearance), timestamps → `<time>`."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        text = _TIME.sub("<time>", text)
        return _ID.sub(lambda m: self.ids.setdefault(m.group(0), f"<id:{len(self.ids) + 1}>"), text)


def direct_calls(key: str, cwd: str) -> list[tuple[str, dict[str, object]]]:
    """One session through the routes the samples do not reach (/feedback, /checkpoint, /event of every kind, a
    session end that waits), and two bad bodies (answered 400 with a message)."""
    event = {"session_key": key, "harness": "claude-code", "cwd": cwd}
    return [
        ("/api/hooks/event", {**event, "kind": "session_started", "source": "startup"}),
        ("/api/hooks/event", {**event, "kind": "prompt_submitted", "prompt": "Why does the crash script fail?"}),
        ("/api/hooks/user-prompt-submit", {"session_key": key, "prompt": "and the deploy notes?",
                                           "memory_feedback": {"nope": 0.5, "x": 7}}),
        ("/api/hooks/feedback", {"session_key": key, "memory_feedback": {"nope": 0.5, "x": "bad"}}),
        ("/api/hooks/event", {**event, "kind": "tool_result", "tool_name": "Bash",
                              "tool_input": {"command": "python3 report.py"}, "output": "ZeroDivisionError",
                              "success": False, "error": "ZeroDivisionError: division by zero"}),
        ("/api/hooks/post-tool-use", {"session_id": key, "tool_name": "Read", "tool_input": {"file_path": "a.py"},
                                      "tool_response": "x = 1", "session_type": "main"}),
        ("/api/hooks/event", {**event, "kind": "turn_ended",
                              "last_assistant_message": "done <memory-feedback>{}</memory-feedback>"}),
        ("/api/hooks/checkpoint", {"session_key": key, "context": "working on the crash script"}),
        ("/api/hooks/event", {**event, "kind": "compacted", "trigger": "auto", "context": "compacting"}),
        ("/api/hooks/event", {**event, "kind": "session_ended", "reason": "exit"}),
        ("/api/hooks/session-end", {"session_key": key + "-b"}),
        ("/api/hooks/user-prompt-submit", {"session_key": key}),
        ("/api/hooks/event", {**event, "kind": "no_such_kind"}),
    ]


class Recorder(ThreadingHTTPServer):
    """Between the hooks and the daemon: forwards each request and keeps its method, path, request body, the
    answer's status and the answer's body as the daemon wrote them (the HTTP JSON, byte for byte)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _Forward)

    def take(self) -> list[str]:
        seen, self.seen = self.seen, []
        return seen


class _Forward(BaseHTTPRequestHandler):
    server: Recorder

    def _forward(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size) if size else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
        answer = httpx.request(self.command, self.server.target + self.path, content=body, headers=headers,
                               timeout=300)
        self.server.seen.append(f"{self.command} {self.path} {body.decode('utf-8', 'replace')} -> "
                                f"{answer.status_code} {answer.content.decode('utf-8', 'replace')}")
        self.send_response(answer.status_code)
        self.send_header("Content-Type", answer.headers.get("content-type", "application/json"))
        self.send_header("Content-Length", str(len(answer.content)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(answer.content)

    do_GET = do_POST = do_PUT = do_DELETE = _forward

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


def session_state(base: str, key: str) -> dict[str, object]:
    """What the daemon kept of a session that the corridor decides: its row's harness/project/cwd/prompt count,
    the memories it was shown (phase, injected), the observer's errors and files."""
    detail = httpx.get(f"{base}/api/sessions/{key}", timeout=60)
    row = detail.json() if detail.status_code == 200 else {"status": detail.status_code}
    session = row.get("session", row) if isinstance(row, dict) else {}
    observed = httpx.get(f"{base}/api/observer/sessions/{key}", timeout=60).json()
    live = observed.get("live") or {}
    return {"session": {k: session.get(k) for k in ("harness", "project", "prompt_count", "transcript_path")},
            "memories": sorted((str(m.get("inject_phase")), m.get("was_injected"), m.get("source"), m.get("rank"))
                               for m in row.get("memories", [])) if isinstance(row, dict) else None,
            "checkpoints": [c.get("trigger") for c in row.get("checkpoints", [])] if isinstance(row, dict) else None,
            "observer": {"live": bool(live), "finished": {k: (observed.get("finished") or {}).get(k)
                                                          for k in ("steps", "tool_calls", "step_injections")},
                         "signals": sorted(str(s.get("signal_class")) for s in observed.get("signals") or [])}}


def run_harness(harness: str, root: Path) -> list[dict[str, object]]:
    home = root / harness / "home"
    kenning_home = root / harness / "kenning"
    found = payloads(harness, home)
    for _, payload in found:
        cwd = payload.get("cwd")
        if isinstance(cwd, str):
            (Path(cwd) / ".git").mkdir(parents=True, exist_ok=True)  # the project is the git root's name
    daemon = start_daemon(kenning_home, CONFIG, {"HOME": str(home)}, log_name="daemon.log", timeout_s=180)
    recorder = Recorder(daemon.base_url)  # the hooks reach the daemon through it: their HTTP answers are kept
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    env = {k: v for k, v in daemon.env.items() if k not in ("KENNING_URL", "KENNING_TOKEN")}
    env["KENNING_PORT"] = str(recorder.server_address[1])
    records: list[dict[str, object]] = []
    try:
        base = daemon.base_url
        for project in PROJECTS:
            for content, kind, applies in MEMORIES:
                body: dict[str, object] = {"content": content, "type": kind, "project": project, "confidence": 1.0}
                if applies:
                    body["applies"] = applies
                answer = httpx.post(f"{base}/api/memory/remember", json=body, timeout=120)
                answer.raise_for_status()
        norm, http_norm = Normaliser(), Normaliser()  # (the hook records number ids as before the http ones)
        hook_cmd = [sys.executable, "-c", "from kenning.cli.entry import main; main()", "hook"]
        for index, (event, payload) in enumerate(found):
            argv = hook_cmd + ([event] if harness == "claude-code" else [harness, event])
            done = subprocess.run(argv, input=json.dumps(payload).encode(), env=env, capture_output=True,
                                  timeout=120, cwd=str(payload.get("cwd") or home))
            records.append({"harness": harness, "index": index, "event": event, "exit": done.returncode,
                            "stdout": norm(done.stdout.decode("utf-8", "replace"))})
            records.append({"harness": harness, "index": f"http:{index}", "event": event, "exit": 0,
                            "stdout": http_norm("\n".join(recorder.take()).replace(str(root), "<root>"))})
        if harness == "claude-code":  # the routes no harness sample reaches, and /event's kinds, posted directly
            for index, (path, body) in enumerate(direct_calls("direct-1", str(home / "proj"))):
                answer = httpx.post(f"{base}{path}", json=body, timeout=120)
                records.append({"harness": harness, "index": f"direct:{index}", "event": path, "exit": 0,
                                "stdout": Normaliser()(f"{answer.status_code} {answer.text}")})  # ids: this answer's
        time.sleep(1.0)  # the observer's promotion and the summary jobs run after session end
        for key in sorted({str(p.get("session_id") or p.get("sessionId")) for _, p in found}):
            records.append({"harness": harness, "index": f"session:{key}", "event": "state", "exit": 0,
                            "stdout": norm(json.dumps(session_state(base, key), sort_keys=True)
                                           .replace(str(root), "<root>"))})
    finally:
        recorder.shutdown()
        recorder.server_close()
        daemon.stop()
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the recording here (JSON)")
    parser.add_argument("--compare", help="a recording to compare with: exit 1 on any difference")
    parser.add_argument("--harness", action="append", choices=HARNESSES, help="only these (repeatable)")
    args = parser.parse_args()
    import kenning

    recorded: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="hook-stdout-") as tmp:
        for harness in args.harness or HARNESSES:
            recorded += run_harness(harness, Path(tmp))
    result = {"code": str(Path(kenning.__file__).resolve().parent), "hooks": recorded,
              "injecting": sum(1 for r in recorded if r["stdout"] and not str(r["index"]).startswith("http:"))}
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text)
    if not args.compare:
        print(json.dumps({"hooks": len(recorded), "injecting": result["injecting"]}))
        return 0
    before = json.loads(Path(args.compare).read_text())["hooks"]
    keyed = {(r["harness"], r["index"]): r for r in before}
    differ = [{"harness": r["harness"], "index": r["index"], "event": r["event"],
               "before": keyed.get((r["harness"], r["index"]), {}).get("stdout"), "after": r["stdout"]}
              for r in recorded
              if {k: keyed.get((r["harness"], r["index"]), {}).get(k) for k in ("event", "exit", "stdout")}
              != {k: r[k] for k in ("event", "exit", "stdout")}]
    compared = [r for r in before if not args.harness or r["harness"] in args.harness]
    print(json.dumps({"hooks": len(recorded), "compared_with": len(compared), "injecting": result["injecting"],
                      "identical": not differ and len(compared) == len(recorded), "differ": differ}, indent=1))
    return 0 if not differ and len(compared) == len(recorded) else 1


if __name__ == "__main__":
    sys.exit(main())
