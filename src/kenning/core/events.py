"""The harness-neutral event model: what any coding-agent harness tells kenning (issue 23).

Every harness (Claude Code, Codex CLI, Gemini CLI, OpenCode, a generic HTTP caller) reaches
kenning through one adapter (`kenning.hooks.adapters.<harness>`) that turns its hook payloads
into these typed, frozen events; the daemon's hooks service consumes only these. A transcript
reader yields the conversation as `Turn`s plus diagnostics (`TranscriptReading`).

The guarantee a transcript reader gives (and that sessions/ relies on): a Turn with role
'user' holds ONLY text the user typed, role 'assistant' ONLY the assistant's own text, role
'tool' a tool call or its result (untrusted: never a rule by itself). Harness text — system
reminders, system prompts, attachments, hook contexts (kenning's own `<kenning-memories>` and
`<memory-feedback>` blocks included) — is never a Turn.

The session-key rule lives here once (`session_key`, and `SessionKey`, the pydantic type every API
body declares a key with): a key is normalised once, at the edge — blanks and invisible characters
around it stripped (a space, tab, newline, CR LF, no-break or em space) — so the ownership check
on a team server (api/session_guard.py) and the engine that stores the event see the same key
(issue 33: the guard checked the raw key while the engine stripped it).

Pure data: imports only the standard library, pydantic (for `SessionKey`) and core.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal, TypedDict, Union

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from kenning.core.errors import InvalidInput
from kenning.core.limits import INVISIBLE_CHARS, MAX_SESSION_KEY_CHARS, VISIBLE_PATTERN, check_created_at

__all__ = [
    "Harness", "HookEvent", "SessionStarted", "PromptSubmitted", "ToolResult", "TurnEnded", "Compacted",
    "SessionEnded", "Event", "EVENT_KINDS", "Turn", "TranscriptReading", "session_key", "SessionKey", "WireTime", "harness_of",
    "event_to_dict", "event_from_dict", "event_of_kind", "strip_harness_text", "HARNESS_BLOCK_TAGS", "parse_feedback",
    "EDIT_TOOLS",
]

_VISIBLE = re.compile(f"[^{INVISIBLE_CHARS}]")
_EDGES = re.compile(f"^[{INVISIBLE_CHARS}]+|[{INVISIBLE_CHARS}]+$")


class Harness(StrEnum):
    """The agent harness an event came from (its value is what `harness` fields carry; the one list of
    harness names: the hook adapters' and connectors' HARNESS and `sessions.idle_end_harnesses` are these)."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    GEMINI = "gemini"
    OPENCODE = "opencode"
    COPILOT = "copilot"  # GitHub Copilot CLI
    GENERIC = "generic"


def harness_of(value: object) -> Harness:
    """The Harness a free-form name denotes ('claude-code', 'Claude Code', 'codex', …); GENERIC when unknown."""
    if isinstance(value, Harness):
        return value
    if not isinstance(value, str):
        return Harness.GENERIC
    name = re.sub(r"[\s_]+", "-", value.strip().lower())
    aliases = {"claude": Harness.CLAUDE_CODE, "claude-code": Harness.CLAUDE_CODE, "claudecode": Harness.CLAUDE_CODE,
               "codex": Harness.CODEX, "codex-cli": Harness.CODEX, "gemini": Harness.GEMINI,
               "gemini-cli": Harness.GEMINI, "opencode": Harness.OPENCODE,
               "copilot": Harness.COPILOT, "copilot-cli": Harness.COPILOT, "github-copilot": Harness.COPILOT,
               "github-copilot-cli": Harness.COPILOT}
    return aliases.get(name, Harness.GENERIC)


def session_key(value: object) -> str:
    """The one session-key rule: a string of at most MAX_SESSION_KEY_CHARS (200) characters as sent (the
    schemas' maxLength) with a visible character, read with its surrounding blanks and invisible characters
    (spaces of every width, controls, zero-width marks: core.limits.INVISIBLE_CHARS) stripped. Raises
    InvalidInput otherwise."""
    if isinstance(value, str) and len(value) > MAX_SESSION_KEY_CHARS:  # padded or not: the schema's maxLength
        raise InvalidInput(f"session_key is longer than {MAX_SESSION_KEY_CHARS} characters")
    key = _EDGES.sub("", value).strip() if isinstance(value, str) else ""
    if not key or not _VISIBLE.search(key):
        raise InvalidInput("session_key must be a non-empty string")
    if len(key) > MAX_SESSION_KEY_CHARS:
        raise InvalidInput(f"session_key is longer than {MAX_SESSION_KEY_CHARS} characters")
    return key


def _session_key_field(value: object) -> object:
    """`session_key` for pydantic: a bad key is a validation error (400 at the hook routes)."""
    try:
        return session_key(value)
    except InvalidInput as exc:
        raise ValueError(str(exc)) from None


# The one pydantic type of a session key (hook bodies, the replay, memories, feedback): normalised as it is read.
SessionKey = Annotated[str, BeforeValidator(_session_key_field),
                       Field(min_length=1, max_length=MAX_SESSION_KEY_CHARS, pattern=VISIBLE_PATTERN)]


# -- how a hook route reads an event's fields from JSON (pydantic: the field types below carry it) -----------
# A hook route's body is read straight into the event (issue 34: one shape in; `api/routes/hooks.read_event`): the
# fields' metadata are the wire contract (limits, descriptions in the OpenAPI schema). Built in code, an event
# is not validated (a dataclass).
MAX_TEXT_CHARS = 200_000  # a `context` the harness sends (sessions.manager.MAX_CONTEXT_CHARS)


def _harness_field(value: object) -> Harness:
    """`harness` as sent: a name of at most 100 characters (or none) → the Harness it denotes (GENERIC: unknown)."""
    if value is None:
        return Harness.GENERIC
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    if len(value) > 100:
        raise ValueError("String should have at most 100 characters")
    return harness_of(value)


def _timestamp_field(value: object) -> str | None:
    """`timestamp` as sent: an ISO 8601 string between 1970 and a day from now, read as UTC (None: the daemon's
    clock)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 date-time string")
    try:
        return check_created_at(value, "timestamp")
    except (InvalidInput, ValueError) as exc:
        raise ValueError(str(exc) or "must be an ISO 8601 date-time string") from None


def _text(limit: int, description: str | None = None) -> Any:
    return Field(max_length=limit, description=description)


_WireHarness = Annotated[Harness, BeforeValidator(_harness_field),
                         WithJsonSchema({"anyOf": [{"type": "string", "maxLength": 100}, {"type": "null"}],
                                         "title": "Harness"})]
_WireTime = Annotated[str | None, BeforeValidator(_timestamp_field),
                      WithJsonSchema({"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}),
                      Field(description="ISO 8601 between 1970 and a day from now; replays set it, else the daemon's "
                            "clock.")]
WireTime = _WireTime  # a hook body's `timestamp` (hookservice.ToolStepBody reads a tool step's with it)
_Kind = SkipJsonSchema[str]  # set by the class, never read from the body


# -- events ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class HookEvent:
    """What every event carries. `timestamp` None: the daemon's clock; `transcript_path`: where the
    harness keeps its transcript, when it gives one (read by the hook process, never the daemon)."""

    # keys the route does not know are ignored (a harness's extras); declared so in the schema
    __pydantic_config__ = ConfigDict(json_schema_extra={"additionalProperties": True})

    session_key: SessionKey
    harness: _WireHarness = Harness.GENERIC
    cwd: Annotated[str | None, _text(4096)] = None
    project: Annotated[str | None, _text(500)] = None
    timestamp: _WireTime = None
    transcript_path: Annotated[str | None, _text(4096, "Where the harness keeps the transcript (kept on the user's "
                               "own daemon: a session left active is ended from it).")] = None

    kind: _Kind = field(default="", init=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class SessionStarted(HookEvent):
    """A session began (or resumed / was cleared / compacted: `source`). `context` is what the
    harness knows about it (branch, recent words of a resumed session) — a retrieval hint only."""

    source: Annotated[str, _text(50, "startup | resume | clear | compact, as the harness says.")] = "startup"
    context: Annotated[str | None, _text(MAX_TEXT_CHARS)] = None
    kind: _Kind = field(default="session_started", init=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class PromptSubmitted(HookEvent):
    """The user typed `prompt` (exactly what they typed, nothing the harness added). `memory_feedback`:
    the ratings sent with it, as sent ({memory id: score}; sessions.prompt.clean_feedback keeps the valid
    ones and counts the rest)."""

    prompt: str
    memory_feedback: dict[str, object] = field(default_factory=dict)
    kind: str = field(default="prompt_submitted", init=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class ToolResult(HookEvent):
    """A tool ran. `success` False: it failed (Claude Code's PostToolUseFailure, a non-zero exit,
    an error result) and `error` says how. `output` and `error` are untrusted text.
    `tool_input` is the call's arguments (a JSON object), `input_summary` a one-line reading of it."""

    tool_name: str
    tool_input: dict[str, Any] = field(default_factory=dict)
    input_summary: str = ""
    output: str = ""
    success: bool = True
    error: str | None = None
    tool_use_id: str | None = None
    session_type: str | None = None  # the observer's session type, as the body says (main, subagent …)
    kind: str = field(default="tool_result", init=False, repr=False)


# The tools that change a file, in the names a ToolResult carries (Claude Code's; each adapter renames its
# harness's tools to these): the observer's scratchpad and the code graph's re-indexing read this one set.
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


@dataclass(frozen=True, kw_only=True)
class TurnEnded(HookEvent):
    """The agent finished answering one prompt; `last_assistant_message` is its final text."""

    last_assistant_message: str = ""
    kind: str = field(default="turn_ended", init=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Compacted(HookEvent):
    """The harness is about to compact (or has compacted) the conversation. `transcript` is the
    transcript text so far when the hook process could read it (its episodes are stored now)."""

    trigger: str = "compact"
    context: str | None = None
    transcript: str | None = None
    kind: str = field(default="compacted", init=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class SessionEnded(HookEvent):
    """The session is over (`reason` as the harness says: exit, clear, logout, other, idle …).
    `transcript` is the transcript text when the hook process read it; `turns` the conversation
    already read by the harness's adapter (preferred over `transcript` when given)."""

    reason: str | None = None
    transcript: str | None = None
    turns: tuple["Turn", ...] = ()
    kind: str = field(default="session_ended", init=False, repr=False)


Event = Union[SessionStarted, PromptSubmitted, ToolResult, TurnEnded, Compacted, SessionEnded]
EVENT_KINDS: dict[str, type[HookEvent]] = {
    "session_started": SessionStarted, "prompt_submitted": PromptSubmitted, "tool_result": ToolResult,
    "turn_ended": TurnEnded, "compacted": Compacted, "session_ended": SessionEnded,
}


# -- the conversation a transcript reader yields ------------------------------------------------
TurnRole = Literal["user", "assistant", "tool"]


@dataclass
class Turn:
    """One turn of a conversation. role 'user': only text the user typed; 'assistant': only the
    assistant's text; 'tool': a tool call or result (then `tool_name`, and `is_error` for results).
    Never harness text. (Re-exported as kenning.sessions.transcript.Turn, the seam sessions/ uses.)"""

    role: str  # TurnRole
    text: str
    at: str | None = None  # when it was said (the entry's timestamp), when known
    tool_name: str | None = None
    is_error: bool | None = None


class ReadingDiagnostics(TypedDict):
    """How a transcript read went: its reader, the turns it kept, the entries skipped and unknown (by type)."""

    format: str
    turns: int
    skipped: dict[str, int]
    unknown: dict[str, int]


@dataclass
class TranscriptReading:
    """What a transcript reader returns: the turns, the tool results among them as events, and
    diagnostics — entries skipped as harness text (by type) and entries of unknown types (never guessed)."""

    turns: list[Turn] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    unknown: dict[str, int] = field(default_factory=dict)
    format: str = "text"  # which reader produced it: 'claude-code-jsonl', 'text', …

    def skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1

    def unknown_type(self, what: str) -> None:
        self.unknown[what] = self.unknown.get(what, 0) + 1

    def diagnostics(self) -> ReadingDiagnostics:
        return {"format": self.format, "turns": len(self.turns), "skipped": dict(self.skipped),
                "unknown": dict(self.unknown)}


# -- harness text inside text ---------------------------------------------------------------------
HARNESS_BLOCK_TAGS = ("system-reminder", "kenning-memories", "memory-feedback", "hook_context",
                      "local-command-caveat", "local-command-stdout", "local-command-stderr",
                      "command-name", "command-message", "command-args")
_BLOCK = re.compile(r"<(%s)(?:\s[^>]*)?>.*?</\1\s*>" % "|".join(re.escape(t) for t in HARNESS_BLOCK_TAGS),
                    re.DOTALL | re.IGNORECASE)
_OPEN_TO_END = re.compile(r"<(%s)(?:\s[^>]*)?>.*\Z" % "|".join(re.escape(t) for t in HARNESS_BLOCK_TAGS),
                          re.DOTALL | re.IGNORECASE)


def strip_harness_text(text: str) -> str:
    """`text` without harness blocks (`<system-reminder>…</system-reminder>`, `<kenning-memories>…`,
    `<memory-feedback>…`, `<hook_context>…`, slash-command wrappers). An opened block that never
    closes is cut to the end (a truncated reminder is still a reminder). Blank runs are collapsed."""
    if not text or "<" not in text:
        return text
    cleaned = _OPEN_TO_END.sub("", _BLOCK.sub("", text))
    return re.sub(r"\n{3,}", "\n\n", cleaned).strip()


# -- memory feedback an agent writes ----------------------------------------------------------------
_FEEDBACK_TAG = re.compile(r"<memory-feedback>\s*(\{.*?\})\s*</memory-feedback>", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


def parse_feedback(text: str | None) -> dict[str, float]:
    """Memory feedback from an agent message: `<memory-feedback>{"id": score}</memory-feedback>`
    (else the message's last flat JSON object); scores outside [-1, 1] are dropped."""
    if not text:
        return {}
    import json

    candidates = _FEEDBACK_TAG.findall(text) or _JSON_OBJECT.findall(text)[-1:]
    for raw in reversed(candidates):
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        scores = {str(k): float(v) for k, v in data.items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool) and -1.0 <= v <= 1.0}
        if scores:
            return scores
    return {}


# -- wire form --------------------------------------------------------------------------------------
def event_to_dict(event: HookEvent) -> dict[str, object]:
    """A JSON-ready dict with `kind` (the inverse of event_from_dict); None values are left out."""
    data = asdict(event)
    data["harness"] = event.harness.value
    data["kind"] = event.kind
    return {k: v for k, v in data.items() if v is not None}


def event_from_dict(data: object) -> Event:
    """The event a dict denotes (its `kind`); InvalidInput for an unknown kind or bad fields."""
    if not isinstance(data, dict):
        raise InvalidInput("an event must be a JSON object")
    return event_of_kind(str(data.get("kind", "")), {**data, "session_key": session_key(data.get("session_key"))})


def event_of_kind(kind: str, data: Mapping[str, object]) -> Event:
    """The event of `kind` from its fields (`data`, a `kind` key in it ignored), whose `session_key` was read
    already (`session_key`, the routes' SessionKey: the one normalisation); InvalidInput for an unknown kind or
    bad fields."""
    cls = EVENT_KINDS.get(kind)
    if cls is None:
        raise InvalidInput(f"unknown event kind {kind!r}; one of {', '.join(EVENT_KINDS)}")
    fields: dict[str, Any] = {k: v for k, v in data.items() if k != "kind"}  # JSON values: the class checks them
    fields["harness"] = harness_of(fields.get("harness"))
    if cls is SessionEnded and fields.get("turns"):
        fields["turns"] = tuple(Turn(**t) if isinstance(t, dict) else t for t in fields["turns"])
    try:
        return cls(**fields)  # type: ignore[return-value]
    except TypeError as exc:
        raise InvalidInput(f"bad {cls.__name__} event: {exc}") from exc
