"""`kenning sessions list|show`: what each session was offered, injected, rated and scored."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Optional

import typer

from kenning.cli.context import console, print_json
from kenning.cli.memory import backend
from kenning.cli.tables import Col, fmt, print_table
from kenning.core.written import account, kind_of

JUDGES = {"heuristic": "estimated from the session's words, no LLM", "llm": "judged by the LLM"}


def _shown(m: Mapping[str, object]) -> str:
    """When a memory was shown to the agent ('at start', 'at prompt 2'), or 'no' (only offered)."""
    if not m.get("was_injected"):
        return "no"
    phase = str(m.get("inject_phase") or "")
    if phase == "session-start":
        return "at start"
    return f"at prompt {phase.split(':', 1)[1]}" if phase.startswith("prompt:") else (phase or "yes")

sessions_app = typer.Typer(help="Inspect agent sessions.")


@sessions_app.callback(invoke_without_command=True)
def _sessions(ctx: typer.Context) -> None:
    """Inspect agent sessions. Alone: the recent ones (`kenning sessions list`)."""
    if ctx.invoked_subcommand is None:
        list_sessions(limit=20, project=None, as_json=False)


@sessions_app.command("list")
def list_sessions(
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Recent sessions with candidate / injected counts and continuity score."""
    with backend() as b:
        data = b.sessions(limit=limit, offset=0, project=project)
    if as_json:
        print_json(data)
        return
    if not data["sessions"]:
        console.print("no sessions yet: `kenning connect claude-code` installs the hooks that record them"
                      if not project else f"no sessions for project {project!r}")
        return
    print_table(console, [
        Col("session", "session_key", "id"), Col("prompts", "prompt_count", "num"),
        Col("offered", "candidates", "num"), Col("shown", "injected", "num"),
        Col("continuity", lambda s: fmt(s.get("score")), "num"),
    ], data["sessions"], detail=Col("project · started · scored by", lambda s: " · ".join(
        [s.get("project") or "(no project)", s["started_at"][:16].replace("T", " "),
         JUDGES.get(s.get("judge") or "", s.get("judge") or "not scored yet")])))
    console.print(f"{len(data['sessions'])} of {data['total']} sessions. offered: memories considered for the "
                  "session; shown: given to the agent; continuity: how much the session built on them (0-1)",
                  highlight=False)


@sessions_app.command("show")
def show(
    key: str = typer.Argument(..., help="Session key (Claude Code's session_id)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Candidates, injected memories, FTS hits, agent feedback and continuity for one session."""
    with backend() as b:
        data = b.session(key)
    if as_json:
        print_json(data)
        return
    s = data["session"]
    ended = s.get("ended_at")
    for line in (f"session {s['session_key']}", " · ".join(x for x in [
            s.get("harness"), f"project {s.get('project') or '(none)'}",
            f"started {s['started_at'][:16].replace('T', ' ')}",
            f"ended {ended[:16].replace('T', ' ')}" if ended else "still open",
            f"{s['prompt_count']} prompt(s)"] if x)):
        console.print(line, highlight=False, markup=False, style="bold")
    if s.get("status_line"):
        console.print(s["status_line"], highlight=False, markup=False)
    print_table(console, [
        Col("#", "rank", "num"), Col("memory", "memory_id", "id"),
        Col("shown", _shown, max_width=12),
        Col("score", lambda m: fmt(m.get("final_score")), "num"),
        Col("agent rated", lambda m: fmt(m.get("agent_relevance_score")) if m["agent_feedback_count"] else "-", "num"),
    ], data["memories"], detail=Col("content", "content"))
    console.print(f"{sum(1 for m in data['memories'] if m['was_injected'])} of {len(data['memories'])} memories "
                  "offered were shown to the agent (--json for every score)", highlight=False)
    created = data.get("created") or []
    kinds = Counter(kind_of(c.get("source")) for c in created if not c.get("is_deleted"))
    console.print(f"this session {account(dict(kinds))}"
                  + (" (kenning review -s learned --session KEY to review them)" if created else ""),
                  highlight=False)
    score = data.get("score")
    if score:
        console.print(f"continuity {score['score']:.2f} ({JUDGES.get(score['judge'], score['judge'])}, confidence "
                      f"{score['confidence']:.2f}): {score['memories_used']} of {score['memories_recalled']} memories "
                      f"shown were used, {score['novel_context_count']} new things learned", highlight=False)
        if score.get("continuity_reasoning"):
            console.print(score["continuity_reasoning"], highlight=False, markup=False)
    else:
        job = data.get("summary_job")
        console.print("not scored yet" + (f" (its summary is {job['status']})" if job else
                                          " (scored when the session ends)"), highlight=False)
    console.print(f"{len(data['prompts'])} prompts, {len(data['checkpoints'])} checkpoints, transcript: "
                  f"{transcript['chars'] if (transcript := data.get('transcript')) else 0} chars", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(sessions_app, name="sessions")
