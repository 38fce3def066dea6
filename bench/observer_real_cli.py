"""bench/observer.py's planted sessions fed through the real Claude Code CLI (issue 23).

    .venv/bin/python bench/observer_real_cli.py --sessions 6 --out /tmp/observer_real.json

The sessions are bench/observer.py's (same seed, same planted regularities). Each becomes one headless
`claude -p` session (the pinned CLI, bench/harnesses/clis.py) whose scripted model (tests/harness/
anthropic_server.py) asks for the session's tool calls one per turn; Claude Code runs them for real and
its hooks (installed by `kenning connect claude-code`) report them: PostToolUse for a success,
**PostToolUseFailure** for a failure. The projects are real folders; every command the sessions run
(pytest, npm, go, make, ruff, git, python) is a small shim on PATH that answers with the session's
scripted output and exits 1 when that output is a failure, so a failing test run is a real non-zero
exit. An Edit is preceded by a Read of its file when the session had not read it (Claude Code refuses
to edit an unread file); Task steps are left out (a subagent); reasoning goes to the transcript as
assistant text (no hook carries it, so dead-end/self-correction are out of scope here).

In the same run, bench/observer.py's own replay (synthetic PostToolUse payloads through the hook
client) on a second daemon. Reported: for each, the promoted regularities (bench/observer.py's
scoring), and the comparison the issue asks for: the error-pattern promotions found from synthetic
payloads that are found from the real CLI's payloads too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import observer as ob  # noqa: E402
from kenning.observer.intake import _BASH_ERROR  # noqa: E402
from bench.harnesses.anthropic_server import AnthropicServer, tool  # noqa: E402
from bench.harnesses.claude_runner import ClaudeHome, run_print  # noqa: E402
from bench.harnesses.clis import cli_path, version  # noqa: E402

SHIMMED = ("pytest", "npm", "go", "make", "ruff", "git", "python")
SHIM = """#!/usr/bin/env python3
import json, os, sys
plan = os.environ["BENCH_PLAN"]
command = " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])
with open(plan) as fh:
    queue = json.load(fh)
answers = queue.get(command) or [{"stdout": "ok", "stderr": "", "exit": 0}]
answer = answers.pop(0) if len(answers) > 1 else answers[0]
with open(plan, "w") as fh:
    json.dump(queue, fh)
sys.stdout.write(answer["stdout"] + ("\\n" if answer["stdout"] else ""))
sys.stderr.write(answer["stderr"] + ("\\n" if answer["stderr"] else ""))
sys.exit(answer["exit"])
"""


def relocate(value, old: str, new: str):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: relocate(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [relocate(v, old, new) for v in value]
    return value


def answer_of(response) -> dict:
    if isinstance(response, dict):
        stdout, stderr = str(response.get("stdout") or ""), str(response.get("stderr") or "")
    else:
        stdout, stderr = str(response or ""), ""
    failed = bool(stderr) or bool(_BASH_ERROR.search(stdout))
    return {"stdout": stdout, "stderr": stderr, "exit": 1 if failed else 0}


def session_script(session: ob.Session, root: Path) -> tuple[list, dict, dict[str, list[str]]]:
    """(model replies, the shim's answers by command, file → old strings to materialise)."""
    old_root = ob.PROJECTS[session.project]["root"]
    replies: list = []
    plan: dict[str, list[dict]] = {}
    files: dict[str, list[str]] = {}
    read: set[str] = set()
    pending_text: str | None = None
    for step in session.steps:
        if step.reasoning is not None:
            pending_text = step.reasoning
            continue
        if step.tool in ("Task", "WebSearch", "WebFetch", ""):
            continue
        args = relocate(step.tool_input, old_root, str(root))
        calls = []
        if step.tool in ("Read", "Edit"):
            path = args["file_path"]
            files.setdefault(path, [])
            if step.tool == "Edit":
                files[path].append(args["old_string"])
                if path not in read:
                    calls.append(tool("Read", file_path=path))
            read.add(path)
        if step.tool == "Bash":
            head = args["command"].split()[0]
            if head in SHIMMED:
                plan.setdefault(args["command"], []).append(answer_of(relocate(step.response, old_root, str(root))))
        calls.append(tool(step.tool, **args))
        for call in calls:
            replies.append([pending_text, call] if pending_text else call)
            pending_text = None
    replies.append(pending_text or "Done.")
    return replies, plan, files


def materialise(root: Path, files: dict[str, list[str]]) -> None:
    for path, olds in files.items():
        target = Path(path)
        if not str(target).startswith(str(root)):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"{old}\n" for old in dict.fromkeys(olds)) or "placeholder = 1\n")


def replay_real(claude: Path, url: str, home_dir: Path, sessions: list[ob.Session], work: Path) -> dict:
    home = ClaudeHome(work / "claude-home")
    port = url.rsplit(":", 1)[1]
    connected = home.connect({"KENNING_HOME": str(home_dir), "KENNING_PORT": port})
    if connected.returncode != 0:
        raise SystemExit(f"kenning connect failed: {connected.stderr}")
    bin_dir = work / "bin"
    bin_dir.mkdir()
    for name in SHIMMED:
        (bin_dir / name).write_text(SHIM)
        (bin_dir / name).chmod(0o755)
    roots = {p: work / "projects" / p for p in ob.PROJECTS}
    keys: dict[str, str] = {}
    hook_events = {"PostToolUse": 0, "PostToolUseFailure": 0}
    began = time.monotonic()
    for n, s in enumerate(sessions):
        root = roots[s.project]
        root.mkdir(parents=True, exist_ok=True)
        replies, plan, files = session_script(s, root)
        materialise(root, files)
        plan_file = work / "plan.json"
        plan_file.write_text(json.dumps(plan))
        env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "BENCH_PLAN": str(plan_file)}
        with AnthropicServer() as server:
            server.script(*replies)
            code, lines, stderr = run_print(claude, home, root, server.url, f"Work on {s.project}.", timeout=600, env=env)
        session_id = next((line.get("session_id") for line in lines if line.get("session_id")), None)
        if session_id:
            keys[session_id] = s.key
        for line in lines:
            if line.get("type") == "user":
                for block in (line.get("message") or {}).get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        hook_events["PostToolUseFailure" if block.get("is_error") else "PostToolUse"] += 1
        if n % 5 == 0:
            print(f"[observer_real_cli] {n + 1}/{len(sessions)} sessions, {time.monotonic() - began:.0f} s", file=sys.stderr)
    with httpx.Client(base_url=url, timeout=120) as http:
        for session_id in keys:  # promotion runs in the background after each SessionEnd: wait for it
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                answer = http.get(f"/api/observer/sessions/{session_id}")
                if answer.status_code == 200 and answer.json().get("finished"):
                    break
                time.sleep(0.5)
        memories = []
        for project in ob.PROJECTS:
            memories += http.get("/api/memory", params={"project": project, "tag": "observer", "limit": 1000}).json()["items"]
    for m in memories:  # bench/observer.py scores by its own session keys
        meta = m.get("metadata") or {}
        meta["supporting_sessions"] = [keys.get(k, k) for k in meta.get("supporting_sessions") or []]
        if m.get("session_key") in keys:
            m["session_key"] = keys[m["session_key"]]
    return {"memories": memories, "injections": [], "tool_results": hook_events,
            "replay_s": round(time.monotonic() - began, 1)}


def promoted_errors(sessions: list[ob.Session], run: dict) -> list[str]:
    return sorted(f"{p}:{r}" for p, r in {ob.regularity_of(m) for m in run["memories"]} - {None} if r == "error")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=6, help="sessions per planted project (3 projects)")
    parser.add_argument("--noise-project", type=int, default=2)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sessions = ob.build_sessions(args.sessions, args.noise_project, args.seed)
    claude = cli_path("claude-code")
    result: dict = {"bench": "observer_real_cli", "claude_code": version("claude-code"), "sessions": len(sessions),
                    "seed": args.seed}
    with tempfile.TemporaryDirectory(prefix="kenning-observer-real-") as tmp:
        work = Path(tmp)
        runs: dict[str, dict] = {}
        for name in ("synthetic", "real_cli"):
            home = work / f"home-{name}"
            home.mkdir()
            proc, url, env = ob.start_daemon(home, True)
            try:
                runs[name] = ob.replay(url, env, sessions) if name == "synthetic" else \
                    replay_real(claude, url, home, sessions, work)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
            scored = ob.score(sessions, {**runs[name], "injections": []})
            result[name] = {k: scored[k] for k in ("promoted", "matching", "promotion_precision", "promotion_recall",
                                                   "missed", "noise_promotions", "false_promotions")}
            result[name]["error_patterns_promoted"] = promoted_errors(sessions, runs[name])
            if name == "real_cli":
                result[name]["tool_results_seen"] = runs[name]["tool_results"]
                result[name]["replay_s"] = runs[name]["replay_s"]
            print(json.dumps({name: result[name]}, indent=1), file=sys.stderr)
    synthetic, real = set(result["synthetic"]["error_patterns_promoted"]), set(result["real_cli"]["error_patterns_promoted"])
    result["error_patterns_found_from_real_payloads_too"] = sorted(synthetic & real)
    result["error_patterns_missed_from_real_payloads"] = sorted(synthetic - real)
    result["target"] = {"every_synthetic_error_pattern_found_from_real_payloads": synthetic <= real}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
