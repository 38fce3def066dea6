"""Deterministic memory text per signal class: names the files, the error fingerprint and the fix.

Used when no LLM provider is configured (and as the fallback when synthesis fails).
"""

from __future__ import annotations

from typing import TypedDict


class SignalDetail(TypedDict, total=False):
    """What the observer's detectors put in a signal's detail (the keys a template reads)."""

    fix_files: list[str]  # error_retry: files edited before the command passed
    resolved: bool
    command: str
    error: str
    text: str  # self_correction, dead_end
    sentence: str  # dead_end
    pattern: str  # repeated_grep, glob_ignore
    results: int  # glob_ignore
    ref: str  # external_reference
    sequence: str  # tool_sequence


def _files(files: list[str], limit: int = 4) -> str:
    shown = [f"`{f}`" for f in files[:limit]]
    return ", ".join(shown) if shown else "the files involved"


def render(signal_class: str, key: str, files: list[str], detail: SignalDetail, sessions: int) -> str:
    seen = f"seen in {sessions} session{'s' if sessions != 1 else ''}"
    if signal_class == "error_retry":
        fix = detail.get("fix_files") or []
        where = f" (mentions {_files([f for f in files if f not in fix])})" if [f for f in files if f not in fix] else ""
        fixed = (f" Fixed by editing {_files(fix)} before re-running." if fix and detail.get("resolved")
                 else " No fix was observed yet.")
        return (f"Running `{detail.get('command', '')[:120]}` fails with: {detail.get('error', '')[:240]}{where}."
                f"{fixed} Error fingerprint {key}; {seen}.")
    if signal_class == "self_correction":
        return f"Correction while working on {_files(files)}: {detail.get('text', '')} ({seen})."
    if signal_class == "dead_end":
        return (f"Dead end on {_files(files)}: {detail.get('sentence') or detail.get('text', '')} "
                f"Do not retry this approach ({seen}).")
    if signal_class == "backtrack":
        return (f"Edits to {_files(files)} were reverted within a few steps: the first change there tends to be "
                f"wrong; check callers and tests before editing ({seen}).")
    if signal_class == "repeated_grep":
        answer = f" The answer was in {_files(files)}." if files else ""
        return f"Searching for `{detail.get('pattern', key)}` recurs ({seen}).{answer}"
    if signal_class == "glob_ignore":
        return (f"Glob `{detail.get('pattern', key)}` returns many files ({detail.get('results')}) of which almost "
                f"none are relevant; narrow the pattern ({seen}).")
    if signal_class == "read_abandon":
        return (f"`{key}` is read again and again without being edited ({seen}); what agents look for there is "
                f"probably elsewhere.")
    if signal_class == "config_touch":
        others = [f for f in files if f != key]
        return f"Changing `{key}` goes together with edits to {_files(others)} ({seen})."
    if signal_class == "external_reference":
        return f"Work on {_files(files)} needed an external reference ({detail.get('ref', '')[:160]}) ({seen})."
    if signal_class == "tool_sequence":
        return f"Recurring workflow: {detail.get('sequence', key)} ({seen})."
    if signal_class == "co_access":
        return (f"{_files(files[:1])} and {_files(files[1:2])} change together: when you edit one, update the other "
                f"({seen}).")
    if signal_class == "file_access":
        return f"Sessions in this project start by reading {_files(files)} ({seen})."
    return f"{signal_class}: {key} ({seen})."
