"""The signal taxonomy (memory-system-v4 section 4) and the pure helpers that detect signals.

Each class carries the seed's score, minimum sessions and the memory types it promotes to
(the first is the default). `dead_end` is the seed's dead-end language filter (section 5);
it promotes from one session like self-correction.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class SignalClass:
    name: str
    score: float
    min_sessions: int
    promotes_to: tuple[str, ...]
    evict_rank: int = 5  # lower is evicted first when a scratchpad is full; 9 = never evicted


TAXONOMY: dict[str, SignalClass] = {c.name: c for c in (
    SignalClass("co_access", 0.91, 3, ("causal_dependency", "prefetch_pattern"), 4),
    SignalClass("self_correction", 0.88, 1, ("gotcha", "module_insight"), 9),
    SignalClass("error_retry", 0.85, 2, ("error_pattern", "gotcha"), 8),
    SignalClass("dead_end", 0.82, 1, ("dead_end",), 9),
    SignalClass("read_abandon", 0.79, 3, ("gotcha",), 5),
    SignalClass("repeated_grep", 0.76, 2, ("module_insight", "gotcha"), 6),
    SignalClass("tool_sequence", 0.73, 3, ("workflow_recipe",), 3),
    SignalClass("file_access", 0.72, 3, ("prefetch_pattern",), 2),
    SignalClass("backtrack", 0.68, 2, ("gotcha",), 7),
    SignalClass("config_touch", 0.66, 2, ("causal_dependency",), 6),
    SignalClass("glob_ignore", 0.64, 2, ("gotcha",), 5),
    SignalClass("external_reference", 0.61, 3, ("module_insight",), 5),
)}
# Signal value (seed): diagnostic × 0.5 + cross-session relevance × 0.3 + (1 - fp rate) × 0.2;
# the table's scores are that value, all above the 0.4 discard line.
DISCARD_BELOW = 0.4

SELF_CORRECTION_PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    r"\bI was wrong about (.+?)[.:]",
    r"\bLet me reconsider[.:]? (.+)",
    r"\bActually,? (.+?) (?:not|instead of|rather than) (.+)",
    r"\bI initially thought (.+?) but (.+)",
    r"\bCorrection: (.+)",
    r"(?:^|\.\s+)Wait[,.] (.+)",
)]
DEAD_END_PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    r"this approach (?:won't|will not|cannot|can't|doesn't|does not) work",
    r"I need to abandon this",
    r"let me try a different approach",
    r"unavailable in (?:test|ci|production)",
    r"not available in this environment",
    r"(?:this|that) was a dead end",
)]

CONFIG_NAMES = {
    "package.json", "tsconfig.json", "pyproject.toml", "setup.cfg", "setup.py", "requirements.txt",
    "Cargo.toml", "go.mod", "Makefile", "Dockerfile", "docker-compose.yml", "docker-compose.yaml",
    ".env", ".env.local", "vite.config.ts", "vite.config.js", "webpack.config.js", "babel.config.js",
    ".eslintrc", ".eslintrc.json", ".prettierrc", "tox.ini", "pytest.ini", "alembic.ini", "config.yaml",
}
CONFIG_SUFFIXES = (".config.js", ".config.ts", ".config.mjs", ".toml", ".ini", ".cfg")

_HEX = re.compile(r"\b(?:0x[0-9a-f]+|(?=[0-9a-f]*\d)[0-9a-f]{6,})\b", re.IGNORECASE)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.\-~]*/)+[\w.\-]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")
_ERROR_LINE = re.compile(
    r"(?:^|\n)\s*((?:[\w.]+(?:Error|Exception|Failure|Warning))\b[^\n]*|error(?:\[\w+\])?:[^\n]*|"
    r"FAILED[^\n]*|fatal:[^\n]*|E\s{2,}[^\n]*|Traceback[^\n]*|npm ERR![^\n]*|[^\n]*command not found[^\n]*|"
    r"[^\n]*\berror: [^\n]*)",
    re.IGNORECASE,
)
_FILE_IN_TEXT = re.compile(r"/?(?:[\w.\-]+/)+[\w.\-]+\.\w{1,6}|\b[\w\-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|rb|c|h|cpp|json|toml|yaml|yml)\b")


def error_line(text: str) -> str:
    """The most telling line of an error output (the last exception/error line, else the last line)."""
    lines = [m.group(1).strip() for m in _ERROR_LINE.finditer(text or "")]
    lines = [line for line in lines if not line.lower().startswith("traceback")] or lines
    if lines:
        return lines[-1][:300]
    tail = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    return tail[-1][:300] if tail else ""


def normalize_error(text: str) -> str:
    """An error line with paths, ids, hex and numbers replaced by placeholders (names are kept: they
    tell one error from another; digits inside them go, so `user_1842` and `user_77` match)."""
    line = error_line(text)
    line = _UUID.sub("<id>", line)
    line = _PATH.sub("<path>", line)
    line = _HEX.sub("<hex>", line)
    line = _NUMBER.sub("<n>", line)
    return _SPACE.sub(" ", line).strip().lower()


def error_fingerprint(text: str) -> str:
    """Stable 16-hex fingerprint of an error: the same failure with other paths/ids/numbers matches."""
    return hashlib.sha1(normalize_error(text).encode("utf-8")).hexdigest()[:16]


def files_in_text(text: str, cwd: str | None = None, limit: int = 8) -> list[str]:
    """File paths an output mentions, relative to `cwd` when inside it."""
    seen: list[str] = []
    for match in _FILE_IN_TEXT.finditer(text or ""):
        value = relative_path(match.group(0), cwd)
        if cwd and value.startswith("/"):
            continue  # outside the project (site-packages, /usr/lib …)
        if value and value not in seen:
            seen.append(value)
        if len(seen) >= limit:
            break
    return seen


def is_config_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in CONFIG_NAMES or name.startswith(".env") or name.endswith(CONFIG_SUFFIXES)


def relative_path(path: str, cwd: str | None) -> str:
    """A file path relative to the session's working directory when it lies inside it."""
    text = str(path).strip()
    if cwd and text.startswith(cwd.rstrip("/") + "/"):
        return text[len(cwd.rstrip("/")) + 1:]
    return text[2:] if text.startswith("./") else text


def command_head(command: str, words: int = 3) -> str:
    """A shell command reduced to its first words without flag values or paths (for sequences)."""
    tokens = [t for t in (command or "").strip().split() if not t.startswith("-")][:words]
    return " ".join(_PATH.sub("<path>", t) for t in tokens)[:80]


def self_correction(text: str) -> str | None:
    for pattern in SELF_CORRECTION_PATTERNS:
        match = pattern.search(text or "")
        if match:
            return _sentence(text, match.start())
    return None


def dead_end(text: str) -> str | None:
    for pattern in DEAD_END_PATTERNS:
        match = pattern.search(text or "")
        if match:
            return _sentence(text, match.start())
    return None


def _sentence(text: str, at: int, limit: int = 300) -> str:
    start = max(text.rfind(". ", 0, at) + 2, text.rfind("\n", 0, at) + 1, 0)
    end_candidates = [i for i in (text.find(". ", at), text.find("\n", at)) if i != -1]
    end = min(end_candidates) + 1 if end_candidates else len(text)
    return text[start:end].strip()[:limit]
