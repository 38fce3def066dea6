"""What a harness hook process does, whatever the harness: stdin JSON in, requests to the daemon
under one deadline, the harness's stdout out, exit 0 always.

A harness adapter (codex.py, gemini.py, opencode.py) supplies `requests(event, payload, ctx)`:
the daemon requests one hook invocation makes (API path and body), and `render(event, answer)`:
what the harness expects on stdout given the daemon's answer to the first request. A request
the daemon did not take (no daemon within the deadline) is spooled (hooks/spool.py) for the
daemon's next start. Transcripts are read only through the confined reader
(hooks/transcript_file.py); a refusal's reason goes to the daemon instead of any text.

Imports stay few (see hooks/transport.py): a hook costs a Python start plus one short round trip.
What only some invocations need loads when they need it (issue 36): the transcript reader for the
events that read one, the spool when the daemon did not answer or events are waiting in it.
tests/install/test_start_imports.py holds the hook process to this.

The payload is read from stdin under a deadline (`read_stdin`, issue 33): a harness that leaves
stdin open — a whole payload and no EOF, or half of one — holds the hook at most STDIN_WAIT_S.
"""

from __future__ import annotations

import os
import sys
import time

from kenning.hooks.jsonc import dumps, loads
from kenning.hooks.transport import Deadline, daemon_endpoint, home_dir, post, read_config

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs a few ms of every hook's start
    from collections.abc import Callable, Mapping

    from kenning.core.transcript_file import Reading
    from kenning.hooks.wire import (
        Answer, HookSpecificOutput, Payload, PromptBody, Request, SessionStartBody, ToolUseBody,
    )

DAEMON_DOWN = ("kenning: the daemon is not running, so this session starts without its memories "
               "(it is recorded and sent once the daemon starts). Start it: kenning daemon start")
CARRIES_TRANSCRIPT_MIN_S = 10.0  # a request carrying a whole transcript never gets less than this
TAIL_BYTES = 256 * 1024


class Context:
    """One invocation's deadline, environment and confined transcript reads."""

    def __init__(self, deadline: Deadline, environ: dict[str, str] | None,
                 config: dict[str, object] | None = None) -> None:
        self.deadline = deadline
        self.environ = environ
        self.config = read_config(home_dir(environ)) if config is None else config
        self.refused: str | None = None
        self.whole_path: str | None = None  # the transcript read whole (a spooled event re-reads it at replay)

    def _note(self, reading: Reading) -> str | None:
        if reading.reason and reading.reason != "no_path" and self.refused is None:
            self.refused = reading.reason
        return reading.text

    def whole(self, path: str | None) -> str | None:
        self.whole_path = path
        from kenning.hooks import transcript_file  # only the events that upload a transcript

        return self._note(transcript_file.read_whole(path, self.deadline, environ=self.environ, config=self.config))

    def tail(self, path: str | None, limit: int = TAIL_BYTES) -> str:
        from kenning.hooks import transcript_file  # only resumed sessions and old Stop payloads

        return self._note(transcript_file.read_tail(path, limit, self.deadline, environ=self.environ,
                                                    config=self.config)) or ""


if TYPE_CHECKING:
    # an adapter's two functions: the daemon requests one invocation makes, what the harness gets back
    RequestsFn = Callable[[str, Payload, Context], list[Request]]
    RenderFn = Callable[[str, Answer], str]


def string(payload: Payload, name: str) -> str | None:
    value = payload.get(name)
    return value if isinstance(value, str) else None


def project_of(cwd: str | None) -> str | None:
    """The project a directory belongs to: the git root's name, else the directory's name."""
    if not cwd:
        return None
    current = os.path.normpath(os.path.abspath(cwd))
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return os.path.basename(current) or None
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.basename(os.path.normpath(cwd)) or None
        current = parent


def strip_blocks(text: str) -> str:
    """`text` without harness blocks (core.events.strip_harness_text; imported only when needed)."""
    if "<" not in text:
        return text.strip()
    from kenning.core.events import strip_harness_text

    return strip_harness_text(text).strip()


def neutral_tool(tools: Mapping[str, str], arg_names: Mapping[str, str], name: str | None,
                 args: object) -> tuple[str | None, dict[str, object] | None]:
    """A harness's tool call in the names kenning's observer reads (Claude Code's: Bash, Read,
    Edit, Write, Grep, Glob …; `file_path`, `old_string` …); names not in the tables stay."""
    renamed = tools.get(name or "", name)
    if not isinstance(args, dict):
        return renamed, None
    return renamed, {arg_names.get(k, k): v for k, v in args.items()}


def session_start(key: str, harness: str, payload: Payload, source: str | None = None,
                  context: str | None = None) -> tuple[str, SessionStartBody]:
    """The session-start request (with the transcript's path: the daemon may end the session from it)."""
    cwd = string(payload, "cwd")
    body: SessionStartBody = {"session_key": key, "harness": harness, "project": project_of(cwd), "cwd": cwd,
            "source": source or string(payload, "source") or "startup",
            "transcript_path": string(payload, "transcript_path")}
    return "/api/hooks/session-start", ({**body, "context": context} if context else body)


def prompt_submit(key: str, text: str | None, *, harness: str | None = None, project: str | None = None,
                  cwd: str | None = None) -> list[Request]:
    """The user-prompt-submit request for what the user typed (harness blocks cut off); none when empty.
    With `harness`, it names the harness, project and cwd too (a prompt that may reach the daemon before
    its session start makes the session's row: Copilot CLI)."""
    prompt = strip_blocks(text or "")
    if not prompt:
        return []
    body: PromptBody = {"session_key": key, "prompt": prompt}
    if harness is not None:
        body["harness"], body["project"], body["cwd"] = harness, project, cwd
    return [("/api/hooks/user-prompt-submit", body)]


def tool_use(key: str, harness: str, name: str | None, args: Mapping[str, object] | None, output: str, *,
             cwd: str | None, call_id: str | None = None, exit_code: int | None = None,
             error: str | None = None, limit: int = 8000) -> tuple[str, ToolUseBody]:
    """The post-tool-use request with its verdict (`is_error`, always sent: the daemon takes it as given, issue 34):
    an `error`, a non-zero `exit_code` or a Bash output with an error line makes it a failed tool."""
    body: ToolUseBody = {
        "session_key": key, "harness": harness, "tool_name": name, "tool_input": args,
        "tool_response": {"output": output[:limit], **({"exit_code": exit_code} if exit_code is not None else {})},
        "cwd": cwd, "tool_use_id": call_id, "is_error": False,
    }
    if error or (exit_code is not None and exit_code != 0):
        body["is_error"] = True
        body["error"] = (error or f"exit code {exit_code}: {output[-2000:]}")[:limit]
    elif name == "Bash" and output:
        judge(body, name, output[:limit])
    return "/api/hooks/post-tool-use", body


def judge(body: ToolUseBody, name: str | None, response: object, limit: int = 8000) -> None:
    """Set a tool step's verdict on `body` from the harness's response (core.tool_outcome.failure: a response
    that says it failed — `is_error`, `interrupted`, a non-zero exit code — or a Bash output with an error line);
    its text is the error. Loaded for tool steps only."""
    from kenning.core.tool_outcome import failure

    error = failure(name, response)
    body["is_error"] = error is not None
    if error is not None:
        body["error"] = error[:limit]


def handle(harness: str, event: str, stdin_text: str, requests: RequestsFn, render: RenderFn,
           carries: frozenset[str] = frozenset(),
           environ: dict[str, str] | None = None) -> str:
    """What to print for one hook invocation ('' when nothing). Never raises. `carries`: the
    events that upload a whole transcript (their deadline is at least CARRIES_TRANSCRIPT_MIN_S)."""
    try:
        config = read_config(home_dir(environ))  # config.yaml is read once per hook
        base_url, token, timeout = daemon_endpoint(environ, config)
        payload = loads(stdin_text) if stdin_text.strip() else None
        if not isinstance(payload, dict):
            return ""
        deadline = Deadline(max(timeout, CARRIES_TRANSCRIPT_MIN_S) if event in carries else timeout)
        ctx = Context(deadline, environ, config)
        first: dict[str, object] | None = None
        down = False  # the first request found no daemon listening
        for index, (path, body) in enumerate(requests(event, payload, ctx)):
            if ctx.refused and "transcript" in body:
                body["transcript_refused"] = ctx.refused
            failure: list[str] = []
            answer = post(base_url, path, body, token=token, timeout=timeout, deadline=deadline, failure=failure)
            if answer is None and failure[:1] == ["unreachable"]:
                from kenning.hooks.spool import spool_request  # only when no daemon answered

                spool_request(path, body, transcript_path=string(payload, "transcript_path") or ctx.whole_path,
                              harness=harness,
                              environ=environ)
            if index == 0:
                first = answer
                down = "not-listening" in failure  # a slow daemon that timed out is not "not running"
        if first is not None and _spool_holds_files(home_dir(environ)):  # a daemon answered: one elsewhere
            from kenning.core.spool import has_pending  # gets this home's spool now (hooks/spool.flush)

            if has_pending(home_dir(environ)):
                from kenning.hooks.spool import flush  # only when events wait in the spool

                flush(base_url, token, deadline, environ=environ, config=ctx.config)
        if first is None and down:  # the user hears of it (harnesses that show a hook's message: render)
            return render(event, {"notice": DAEMON_DOWN})
        return render(event, first) if first else ""
    except Exception:  # noqa: BLE001 - process boundary: the agent must never be blocked
        return ""


def _spool_holds_files(home: str) -> bool:
    """False when the spool folder is missing or empty, the usual case: the hook then skips loading
    core.spool (~0.3 ms) to ask it whether events wait (`has_pending` reads the names)."""
    try:
        return bool(os.listdir(os.path.join(home, "spool")))  # core.spool.DIRNAME
    except OSError:
        return False


def inject_of(answer: Answer | None) -> str:
    inject = answer.get("inject") if isinstance(answer, dict) else None
    return inject if isinstance(inject, str) and inject.strip() else ""


def hook_specific_output(injecting: frozenset[str]) -> RenderFn:
    """`render` for harnesses that read `hookSpecificOutput.additionalContext` (Codex, Gemini CLI)."""
    def render(event: str, answer: Answer) -> str:
        inject = inject_of(answer)
        if event not in injecting or not inject:
            return ""
        out: HookSpecificOutput = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": inject}}
        return dumps(out)

    return render


# -- the payload on stdin, under a deadline (issue 33): a harness may leave stdin open ------------
STDIN_WAIT_S = 1.0  # the most a hook waits for its payload; the requests then share the hook timeout
STDIN_CHUNK = 1 << 16


def _whole_object(data: bytes) -> bool:
    """Is `data` one complete JSON object (so no more is coming)?"""
    if not data.rstrip().endswith(b"}"):
        return False
    try:
        return isinstance(loads(data), dict)
    except ValueError:
        return False


def read_stdin(wait_s: float = STDIN_WAIT_S, fd: int = 0) -> str:
    """What the harness wrote on `fd` (stdin) as text: up to EOF, a whole JSON object, or `wait_s`
    seconds, whichever comes first; '' for a terminal, a closed stdin or bytes that are not UTF-8."""
    import select  # only here: the one read of the hook's payload

    try:
        if os.isatty(fd):
            return ""
    except OSError:
        return ""
    end = time.monotonic() + wait_s
    chunks: list[bytes] = []
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break  # the deadline: nothing more came
            chunk = os.read(fd, STDIN_CHUNK)
        except InterruptedError:
            continue
        except (OSError, ValueError):
            break
        if not chunk:
            break  # EOF
        chunks.append(chunk)
        if chunk.rstrip().endswith(b"}") and _whole_object(b"".join(chunks)):
            break  # the payload is whole: the harness may keep stdin open, we need no more
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        return ""


def main(harness: str, argv: list[str], requests: RequestsFn, render: RenderFn, carries: frozenset[str]) -> int:
    """`kenning hook <harness> <event>`: read stdin (at most STDIN_WAIT_S: a harness that
    leaves it open holds no hook), print the answer, exit 0."""
    event = argv[0] if argv else ""
    try:
        stdin_text = read_stdin()
    except (OSError, ValueError):
        stdin_text = ""
    out = handle(harness, event, stdin_text, requests, render, carries)
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0
