"""The per-session scratchpad (memory-system-v4 section 5): O(1) analytics per event, bounded.

`on_tool_call` / `on_tool_result` / `on_reasoning` update plain dicts and lists, never the
database; each returns a `StepContext` (what this step touched) for the step decider.
`finalize()` turns the analytics into `Signal`s (the session's signal summary). The whole
state round-trips through `to_state()` / `from_state()` (JSON) for checkpoints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict
from urllib.parse import urlparse

from kenning.core.events import EDIT_TOOLS
from kenning.observer import signals as sig

READ_TOOLS = {"Read", "NotebookRead"}
SEARCH_TOOLS = {"Grep", "Glob"}
EXTERNAL_TOOLS = {"WebFetch", "WebSearch"}
BACKTRACK_WINDOW = 20
COACCESS_WINDOW = 5
EARLY_STEPS = 5
EXTERNAL_EDIT_WINDOW = 10
SEQUENCE_N = 4
RECENT_EDITS_PER_FILE = 4


@dataclass
class Signal:
    signal_class: str
    key: str
    files: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    step: int = 0
    contaminated: bool = False


@dataclass
class StepContext:
    """What one event touched: the decider's input."""

    tool: str = ""
    files: list[str] = field(default_factory=list)
    pattern: str | None = None
    error_fingerprint: str | None = None
    error: str | None = None


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]


def _evict_oldest(mapping: dict, cap: int) -> None:
    while len(mapping) > cap:
        mapping.pop(next(iter(mapping)))


class LiveSummary(TypedDict):
    """What the dashboard/API shows of a live session (`Scratchpad.summary`)."""

    session_key: str
    project: str | None
    step: int
    tool_calls: int
    files: int
    edited: int
    open_errors: int
    external_step: int | None
    signals: dict[str, list[str]]
    injected: list[str]


class Scratchpad:
    def __init__(self, session_key: str, *, project: str | None = None, cwd: str | None = None,
                 caps: dict[str, int] | None = None) -> None:
        self.session_key = session_key
        self.project = project
        self.cwd = cwd
        self.session_type: str | None = None
        self.caps = {"files": 400, "patterns": 200, "errors": 100, "signals": 50, **(caps or {})}
        self.step = 0
        self.tool_calls = 0
        self.files: dict[str, dict[str, int]] = {}
        self.recent_edits: dict[str, list[list[Any]]] = {}
        self.greps: dict[str, dict[str, Any]] = {}
        self.globs: dict[str, dict[str, Any]] = {}
        self.open_errors: dict[str, dict[str, Any]] = {}
        self.error_counts: dict[str, int] = {}
        self.tools: list[str] = []
        self.sequences: dict[str, int] = {}
        self.config_touched: list[str] = []
        self.external_step: int | None = None
        self.external_refs: list[dict[str, Any]] = []
        self.signals: dict[str, list[dict[str, Any]]] = {}
        self.injected: list[str] = []
        self.reasoning_events = 0
        self.dirty = True

    # -- intake ----------------------------------------------------------------------------
    def on_tool_call(self, tool: str, args: Mapping[str, object]) -> StepContext:
        self.step += 1
        self.tool_calls += 1
        self.dirty = True
        ctx = StepContext(tool=tool)
        self._sequence(tool, args)
        if tool in EXTERNAL_TOOLS:
            self.external_step = self.step
            ref = str(args.get("url") or args.get("query") or "")[:200]
            self.external_refs = (self.external_refs + [{"ref": ref, "step": self.step, "edited": []}])[-10:]
        paths = self._paths(tool, args)
        for path in paths:
            self._touch(path, edit=tool in EDIT_TOOLS)
        ctx.files = paths
        if tool in EDIT_TOOLS:
            for path in paths:
                self._on_edit(path, args)
        if tool in SEARCH_TOOLS:
            pattern = str(args.get("pattern") or args.get("glob") or "").strip()[:300]
            if pattern:
                ctx.pattern = pattern
                table = self.greps if tool == "Grep" else self.globs
                entry = table.setdefault(pattern, {"count": 0, "step": self.step, "after": [], "results": []})
                entry["count"] += 1
                entry["step"] = self.step
                _evict_oldest(table, self.caps["patterns"])
        return ctx

    def on_tool_result(self, tool: str, args: Mapping[str, object], result: str, is_error: bool,
                       ctx: StepContext | None = None) -> StepContext:
        ctx = ctx or StepContext(tool=tool, files=self._paths(tool, args))
        self.dirty = True
        if tool == "Glob" and ctx.pattern and ctx.pattern in self.globs:
            listed = [line.strip() for line in (result or "").splitlines() if line.strip()][:500]
            self.globs[ctx.pattern]["results"] = [sig.relative_path(p, self.cwd) for p in listed][:200]
        if tool == "Bash":
            command = str(args.get("command") or "")
            key = sig.command_head(command)
            if is_error:
                fp = sig.error_fingerprint(result)
                ctx.error_fingerprint, ctx.error = fp, sig.error_line(result)
                self.error_counts[fp] = self.error_counts.get(fp, 0) + 1
                _evict_oldest(self.error_counts, self.caps["errors"])
                entry = self.open_errors.setdefault(key, {
                    "fp": fp, "error": ctx.error, "command": command[:300], "step": self.step,
                    "files": sig.files_in_text(result, self.cwd), "fix_files": [], "retries": 0,
                })
                entry["retries"] += 1
                _evict_oldest(self.open_errors, self.caps["errors"])
            elif key in self.open_errors:
                entry = self.open_errors.pop(key)
                self._add_signal(Signal(
                    "error_retry", entry["fp"], files=list(dict.fromkeys(entry["files"] + entry["fix_files"]))[:8],
                    detail={"error": entry["error"], "command": entry["command"], "fix_files": entry["fix_files"][:8],
                            "retries": entry["retries"], "resolved": True},
                    step=entry["step"], contaminated=self._tainted(entry["step"]),
                ))
        return ctx

    def on_reasoning(self, text: str, *, recent: list[str] | None = None, edited: list[str] | None = None,
                     tainted: bool | None = None) -> None:
        """Self-correction and dead-end language. The files it is about are those of the last steps
        (or `recent` / `edited` when replaying a transcript, with `tainted` for its web fetches)."""
        if not text:
            return
        self.dirty = True
        self.reasoning_events += 1
        if recent is None:
            recent = [p for p, f in self.files.items() if self.step - f["last"] <= COACCESS_WINDOW][-3:]
        if edited is None:
            edited = [p for p, f in self.files.items() if f["edits"] and self.step - f["last"] <= COACCESS_WINDOW][-2:]
        taint = self._tainted(self.step) if tainted is None else tainted
        correction = sig.self_correction(text)
        if correction:
            self._add_signal(Signal("self_correction", f"{recent[-1] if recent else ''}:{_digest(correction.lower())}",
                                    files=recent, detail={"text": correction}, step=self.step, contaminated=taint))
        ended = sig.dead_end(text)
        if ended:
            files = edited or recent
            self._add_signal(Signal("dead_end", f"{files[-1] if files else ''}:{_digest(ended.lower())}",
                                    files=files, detail={"text": text.strip()[:400], "sentence": ended},
                                    step=self.step, contaminated=taint))

    # -- helpers ---------------------------------------------------------------------------
    def _paths(self, tool: str, args: Mapping[str, object]) -> list[str]:
        raw: list[str] = []
        for name in ("file_path", "notebook_path"):
            value = args.get(name)
            if isinstance(value, str):
                raw.append(value)
        searched = args.get("path")
        if tool == "Grep" and isinstance(searched, str) and "." in searched.rsplit("/", 1)[-1]:
            raw.append(searched)
        return [sig.relative_path(p, self.cwd) for p in raw if p.strip()][:4]

    def _touch(self, path: str, *, edit: bool) -> None:
        entry = self.files.get(path)
        if entry is None:
            entry = self.files[path] = {"first": self.step, "last": self.step, "reads": 0, "edits": 0}
            _evict_oldest(self.files, self.caps["files"])
        entry["last"] = self.step
        entry["edits" if edit else "reads"] += 1
        if sig.is_config_file(path) and edit and path not in self.config_touched:
            self.config_touched = (self.config_touched + [path])[-20:]
        for pattern in list(self.greps)[-5:]:
            grep = self.greps[pattern]
            if self.step - grep["step"] <= 3 and path not in grep["after"] and len(grep["after"]) < 5:
                grep["after"].append(path)
        for entry_error in self.open_errors.values():
            if edit and path not in entry_error["fix_files"] and len(entry_error["fix_files"]) < 8:
                entry_error["fix_files"].append(path)
        if edit:
            for ref in self.external_refs:
                if self.step - ref["step"] <= EXTERNAL_EDIT_WINDOW and path not in ref["edited"] and len(ref["edited"]) < 5:
                    ref["edited"].append(path)

    def _on_edit(self, path: str, args: Mapping[str, object]) -> None:
        pairs = [(args.get("old_string"), args.get("new_string"))]
        edits = args.get("edits")
        if isinstance(edits, list):
            pairs = [(e.get("old_string"), e.get("new_string")) for e in edits if isinstance(e, dict)]
        history = self.recent_edits.setdefault(path, [])
        for old, new in pairs:
            old_d = _digest(old) if isinstance(old, str) and old else None
            new_d = _digest(new) if isinstance(new, str) and new else None
            for step, prev_old, prev_new in history:
                if self.step - step <= BACKTRACK_WINDOW and prev_old and new_d == prev_old and old_d == prev_new:
                    self.files[path]["reverted"] = self.files[path].get("reverted", 0) + 1
                    self._add_signal(Signal("backtrack", path, files=[path],
                                            detail={"first_step": step, "reverted_at": self.step},
                                            step=self.step, contaminated=self._tainted(self.step)))
            history.append([self.step, old_d, new_d])
        del history[:-RECENT_EDITS_PER_FILE]
        _evict_oldest(self.recent_edits, self.caps["files"])

    def _sequence(self, tool: str, args: Mapping[str, object]) -> None:
        label = f"Bash:{sig.command_head(str(args.get('command') or ''), 2)}" if tool == "Bash" else tool
        self.tools = (self.tools + [label])[-8:]
        if len(self.tools) >= SEQUENCE_N:
            gram = " > ".join(self.tools[-SEQUENCE_N:])
            self.sequences[gram] = self.sequences.get(gram, 0) + 1
            _evict_oldest(self.sequences, self.caps["patterns"])

    def _tainted(self, step: int) -> bool:
        return self.external_step is not None and step >= self.external_step

    def _add_signal(self, signal: Signal) -> None:
        bucket = self.signals.setdefault(signal.signal_class, [])
        for existing in bucket:
            if existing["key"] == signal.key:
                existing["detail"].update(signal.detail)
                existing["files"] = list(dict.fromkeys(existing["files"] + signal.files))[:8]
                return
        bucket.append(asdict(signal))
        if len(bucket) > self.caps["signals"]:
            bucket.pop(0)
        total = sum(len(v) for v in self.signals.values())
        if total > self.caps["signals"] * 4:  # evict from the lowest-value class first
            victim = min((c for c in self.signals if self.signals[c] and sig.TAXONOMY[c].evict_rank < 9),
                         key=lambda c: sig.TAXONOMY[c].evict_rank, default=None)
            if victim:
                self.signals[victim].pop(0)

    # -- session end ---------------------------------------------------------------------------
    def edited_files(self) -> list[str]:
        return [p for p, f in self.files.items() if f["edits"]]

    def derived_session_type(self) -> str:
        return self.session_type or ("build" if self.edited_files() else "insights")

    def finalize(self) -> list[Signal]:
        """The session's signal summary: in-session signals plus those read off the analytics."""
        out = [Signal(**s) for bucket in self.signals.values() for s in bucket]
        for entry in self.open_errors.values():
            if entry["retries"] >= 2:
                out.append(Signal("error_retry", entry["fp"], files=list(dict.fromkeys(entry["files"] + entry["fix_files"]))[:8],
                                  detail={"error": entry["error"], "command": entry["command"],
                                          "fix_files": entry["fix_files"], "retries": entry["retries"], "resolved": False},
                                  step=entry["step"], contaminated=self._tainted(entry["step"])))
        for pattern, grep in self.greps.items():
            if grep["count"] >= 2:
                out.append(Signal("repeated_grep", pattern, files=grep["after"][:5],
                                  detail={"pattern": pattern, "count": grep["count"], "tool": "Grep"},
                                  step=grep["step"], contaminated=self._tainted(grep["step"])))
        for pattern, glob in self.globs.items():
            results = glob["results"]
            if len(results) >= 10:
                read = sum(1 for p in results if p in self.files)
                if read / len(results) < 0.1:
                    out.append(Signal("glob_ignore", pattern, files=[p for p in results if p in self.files][:5],
                                      detail={"pattern": pattern, "results": len(results), "read": read},
                                      step=glob["step"], contaminated=self._tainted(glob["step"])))
            if glob["count"] >= 2:
                out.append(Signal("repeated_grep", pattern, files=glob["after"][:5],
                                  detail={"pattern": pattern, "count": glob["count"], "tool": "Glob"},
                                  step=glob["step"], contaminated=self._tainted(glob["step"])))
        edited = self.edited_files()
        for path, f in self.files.items():
            if f["reads"] >= 3 and not f["edits"]:
                out.append(Signal("read_abandon", path, files=[path], detail={"reads": f["reads"]}, step=f["last"],
                                  contaminated=self._tainted(f["last"])))
            if f["first"] <= EARLY_STEPS:
                out.append(Signal("file_access", path, files=[path], detail={"first_step": f["first"],
                                                                           "edited": bool(f["edits"])}, step=f["first"]))
        for config in self.config_touched:
            others = [p for p in edited if p != config]
            if len(others) >= 2:
                out.append(Signal("config_touch", config, files=[config] + others[:5], detail={"edited_with": others[:5]},
                                  step=self.files.get(config, {}).get("last", 0)))
        for ref in self.external_refs:
            if ref["edited"]:
                domain = urlparse(ref["ref"]).netloc or ref["ref"][:80]
                out.append(Signal("external_reference", f"{domain}>{ref['edited'][0]}", files=ref["edited"],
                                  detail={"ref": ref["ref"]}, step=ref["step"], contaminated=True))
        for gram, count in self.sequences.items():
            if count >= 2 and gram.count("Bash:") >= 2 and len(set(gram.split(" > "))) >= 3:
                out.append(Signal("tool_sequence", gram, detail={"sequence": gram, "count": count}))
        pairs = sorted(p for p in edited if not self.files[p].get("reverted"))[:20]  # a reverted edit is no change
        for i, a in enumerate(pairs):
            for b in pairs[i + 1:]:
                out.append(Signal("co_access", f"{a}|{b}", files=[a, b], detail={"edited": True}))
        return out

    def summary(self) -> LiveSummary:
        """What the dashboard/API shows of a live session."""
        return {
            "session_key": self.session_key, "project": self.project, "step": self.step,
            "tool_calls": self.tool_calls, "files": len(self.files), "edited": len(self.edited_files()),
            "open_errors": len(self.open_errors), "external_step": self.external_step,
            "signals": {c: [s["key"] for s in bucket] for c, bucket in self.signals.items() if bucket},
            "injected": list(self.injected),
        }

    # -- checkpoint ---------------------------------------------------------------------------
    _STATE = ("project", "cwd", "session_type", "step", "tool_calls", "files", "recent_edits", "greps", "globs",
              "open_errors", "error_counts", "tools", "sequences", "config_touched", "external_step",
              "external_refs", "signals", "injected", "reasoning_events")

    def to_state(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self._STATE}

    @classmethod
    def from_state(cls, session_key: str, state: Mapping[str, object], caps: dict[str, int] | None = None) -> "Scratchpad":
        pad = cls(session_key, caps=caps)
        for name in cls._STATE:
            if name in state:
                setattr(pad, name, state[name])
        pad.dirty = False
        return pad
