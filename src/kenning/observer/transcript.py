"""Reasoning from a stored transcript: Claude Code's hooks carry no reasoning stream, so at session
end the assistant's words are read from the transcript (when one was kept) for self-correction
and dead-end language, each tied to the files of the tool calls just before it and tainted when
a WebFetch/WebSearch came earlier. Skipped when the harness streamed reasoning events itself."""

from __future__ import annotations

import json

from kenning.core.events import EDIT_TOOLS
from kenning.observer.scratchpad import EXTERNAL_TOOLS, Scratchpad
from kenning.observer.signals import relative_path
from kenning.sessions.transcript import parse_transcript

RECENT_TOOL_FILES = 3


def reasoning_from_transcript(pad: Scratchpad, transcript: str) -> int:
    """Feed the transcript's assistant turns to the scratchpad; returns how many were read."""
    if pad.reasoning_events or not transcript:
        return 0
    recent: list[str] = []
    edited: list[str] = []
    tainted = False
    read = 0
    for turn in parse_transcript(transcript):
        if turn.role == "tool":
            for line in turn.text.splitlines():
                name, _, raw = line.partition(": ")
                if name in EXTERNAL_TOOLS:
                    tainted = True
                try:
                    args = json.loads(raw)
                except ValueError:
                    continue
                path = args.get("file_path") if isinstance(args, dict) else None
                if isinstance(path, str) and path:
                    rel = relative_path(path, pad.cwd)
                    recent = (recent + [rel])[-RECENT_TOOL_FILES:]
                    if name in EDIT_TOOLS:
                        edited = (edited + [rel])[-2:]
        elif turn.role == "assistant":
            pad.on_reasoning(turn.text, recent=list(recent), edited=list(edited), tainted=tainted)
            read += 1
    return read
