"""The step decider (memory-system-v4 section 9, StepInjectionDecider): after one tool step,
which stored memories matter now? No LLM, no embedding: one indexed lookup per key.

Priority: an error whose fingerprint matches a stored error pattern (show the fix), then a
Grep/Glob pattern a stored memory answers, then the rules, gotchas / error patterns / dead ends (and,
on edits, causal dependencies) about the file just read or edited: an area rule linked to that file
(issue 31: its `related_files` hold the code it names) reaches the agent here, not at session start. Memories already shown
in this session are skipped; at most `step_limit`, each at least `step_min_confidence`, and
only what the one ranking home lets be shown unasked (`sessions.ranking.admit_unasked`: no raw
exchange or commit, nothing waiting for review, nothing the agent rated down in two sessions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kenning.core.clock import now_iso
from kenning.core.config_observer import ObserverSettings
from kenning.core.config_sessions import RankingSettings
from kenning.core.events import EDIT_TOOLS
from kenning.core.types import Memory
from kenning.observer.scratchpad import READ_TOOLS, Scratchpad, StepContext
from kenning.sessions import ranking
from kenning.store import observer as store
from kenning.store.backend import StoreDatabase

AREA_RULE_TYPES = ("constraint", "decision", "preference")  # a rule about a file comes up with the file (issue 31)
FILE_TYPES = AREA_RULE_TYPES + ("gotcha", "error_pattern", "dead_end")
EDIT_TYPES = FILE_TYPES + ("causal_dependency",)
ERROR_TYPES = ("error_pattern", "gotcha", "dead_end")


@dataclass
class StepDecision:
    memories: list[tuple[str, Memory]] = field(default_factory=list)  # (matched key, memory)

    @property
    def ids(self) -> list[str]:
        return [m.id for _, m in self.memories]


def keys_for(ctx: StepContext, cwd: str | None) -> list[tuple[str, tuple[str, ...] | None]]:
    keys: list[tuple[str, tuple[str, ...] | None]] = []
    if ctx.error_fingerprint:
        keys.append((f"error:{ctx.error_fingerprint}", ERROR_TYPES))
    if ctx.pattern:
        keys.append((f"search:{ctx.pattern}"[:500], None))
    if ctx.tool in READ_TOOLS or ctx.tool in EDIT_TOOLS:
        types = EDIT_TYPES if ctx.tool in EDIT_TOOLS else FILE_TYPES
        for path in ctx.files:
            keys.append((f"file:{path}", types))
            if cwd and not path.startswith("/"):
                keys.append((f"file:{cwd.rstrip('/')}/{path}", types))
    return keys


def decide(db: StoreDatabase, settings: ObserverSettings, pad: Scratchpad, ctx: StepContext,
           ranking_cfg: RankingSettings | None = None) -> StepDecision:
    keys = keys_for(ctx, pad.cwd)
    if not keys or settings.step_limit == 0:
        return StepDecision()
    conn = db.reader()
    found = store.step_lookup(
        conn, keys, project=pad.project, session_key=pad.session_key, exclude=pad.injected,
        min_confidence=settings.step_min_confidence, limit=settings.step_limit * 3,
    )
    admitted = {m.id for m in ranking.admit_unasked(conn, [m for _, m in found], now_iso(),
                                                    ranking_cfg or RankingSettings())}
    return StepDecision([(key, m) for key, m in found if m.id in admitted][: settings.step_limit])


def render(decision: StepDecision, budget_chars: int) -> str:
    """The additionalContext text: one line per memory, the reason first, within the budget."""
    lines = ["Kenning memory relevant to this step:"]
    used = len(lines[0])
    for key, memory in decision.memories:
        kind, _, value = key.partition(":")
        why = {"error": "this error was seen before", "search": f"answers the search `{value[:60]}`",
               "file": f"about `{value[-80:]}`"}.get(kind, kind)
        line = f"- [{memory.type}, {why}] {memory.content} (id {memory.id})"
        if used + len(line) + 1 > budget_chars:
            line = line[: max(0, budget_chars - used - 2)] + "…"
        lines.append(line)
        used += len(line) + 1
        if used >= budget_chars:
            break
    return "\n".join(lines) if len(lines) > 1 else ""
