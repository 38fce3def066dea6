"""Did a tool fail? The one reading of a tool's response (issue 34).

A tool step's verdict is decided once, where the harness's payload is read: the hook adapters
(`kenning.hooks.adapters.*`) set `is_error` / `error` on the post-tool-use body from what their harness
says — Claude Code's PostToolUseFailure, a non-zero exit the harness reports as a success (Copilot CLI's
"completed with exit code N", Codex's rollout, Gemini CLI's `Exit Code: N`, OpenCode's `metadata.exit`),
an `interrupted` / `is_error` response — and, for Bash, an output that carries a recognisable error line.
The daemon takes that verdict as given (`verdict`); it reads the response itself only for a caller that
sent none (the generic HTTP contract, /api/observe, an event spooled by an older hook), with these same
functions. The observer takes the event's `success` and never decides.

Imported by the hook process for tool events only: no module-level imports (`re` and `json` load when a
Bash output may hold an error line, or a response is a list / an odd dict).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook process never loads `typing`
    import re

MAX_RESULT_CHARS = 8000
# a Bash error line needs one of these (lower-cased) words: the regex below is compiled only when one is there
_ERROR_WORDS = ("error", "exception:", "fail", "traceback", "fatal:", "npm err!", "command not found", "exit code ",
                "panicked at")
_BASH_ERROR: list[re.Pattern[str]] = []


def bash_error_pattern() -> re.Pattern[str]:
    """The error lines a Bash output that exited 0 may still carry (a test run piped through `tail` …)."""
    if not _BASH_ERROR:
        import re

        _BASH_ERROR.append(re.compile(
            r"Traceback \(most recent call last\)|\b\w+(?:Error|Exception):|^error(?:\[\w+\])?:|\bFAILED\b|^fatal:|"
            r"npm ERR!|command not found|exit code [1-9]|\bpanicked at\b|^--- FAIL|^FAIL\b",
            re.IGNORECASE | re.MULTILINE,
        ))
    return _BASH_ERROR[0]


def bash_failed(tool: str | None, text: str) -> bool:
    """A Bash output with an error line in it."""
    if tool != "Bash" or not text:
        return False
    lower = text.lower()
    return any(word in lower for word in _ERROR_WORDS) and bash_error_pattern().search(text) is not None


def _dumps(value: object) -> str:
    import json

    return json.dumps(value, default=str)


def _failed(response: dict[str, object]) -> bool:
    """A dict response that says it failed: `is_error`, `isError`, `interrupted`, `error`, a non-zero exit code."""
    if response.get("is_error") or response.get("isError") or response.get("interrupted") or response.get("error"):
        return True
    code = response.get("exit_code", response.get("exitCode", response.get("returncode")))
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def _parts(response: dict[str, object]) -> list[str]:
    parts = [str(response[k]) for k in ("stdout", "stderr", "error", "output", "content", "result") if response.get(k)]
    filenames = response.get("filenames")
    if isinstance(filenames, list):
        parts.append("\n".join(str(f) for f in filenames))
    return parts


def response_text(response: object) -> tuple[str, bool]:
    """(text, the response says it failed) of a tool response in any harness's shape: a dict with exit codes /
    stdout / stderr (`is_error`, `isError`, `interrupted`, `error`, a non-zero `exit_code` / `exitCode` /
    `returncode`: failed), a list, or text."""
    if response is None:
        return "", False
    if isinstance(response, str):
        return response[:MAX_RESULT_CHARS], False
    if isinstance(response, list):
        return _dumps(response)[:MAX_RESULT_CHARS], False
    if not isinstance(response, dict):
        return str(response)[:MAX_RESULT_CHARS], False
    parts = _parts(response)
    text = "\n".join(parts) if parts else _dumps(response)
    return text[:MAX_RESULT_CHARS], _failed(response)


def read_result(tool: str | None, response: object) -> tuple[str, bool]:
    """(text, failed) of a tool's response: `response_text`, and for Bash an output that carries an error line."""
    text, failed = response_text(response)
    return text, failed or bash_failed(tool, text)


def failure(tool: str | None, response: object) -> str | None:
    """What a failed tool said (its response's text, else 'tool failed'), or None when it did not fail: the rule of
    `read_result`, without the text a verdict does not need (the hook process: no `json`, and `re` only for a
    Bash output with an error word)."""
    if isinstance(response, dict):
        text, failed = "\n".join(_parts(response))[:MAX_RESULT_CHARS], _failed(response)
    elif isinstance(response, str):
        text, failed = response[:MAX_RESULT_CHARS], False
    else:
        return None
    if failed or bash_failed(tool, text):
        return text or "tool failed"
    return None


def verdict(tool: str | None, response: object, is_error: object, error: object) -> tuple[str, bool]:
    """(text, failed) of a tool step as a caller sent it: its own verdict when it gives one (`is_error` a bool:
    every kenning adapter sends it; an `error` text is a failure), else the reading of its response
    (`read_result`: a caller that sent none)."""
    if isinstance(is_error, bool):
        return response_text(response)[0], is_error or bool(error)
    text, failed = read_result(tool, response)
    return text, failed or bool(error)
