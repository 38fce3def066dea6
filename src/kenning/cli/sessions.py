"""`kenning sessions list|show`: what each session was offered, injected, rated and scored."""

from __future__ import annotations

from typing import Optional

import typer
from rich.table import Table

from kenning.cli.backend import LocalBackend
from kenning.cli.context import console, print_json
from kenning.cli.memory import backend

sessions_app = typer.Typer(no_args_is_help=True, help="Inspect agent sessions.")


def _list(b, **params) -> dict:
    if isinstance(b, LocalBackend):
        return b.kenning.sessions.list(**params)
    return b.sessions(**params)


def _detail(b, key: str) -> dict:
    if isinstance(b, LocalBackend):
        return b.kenning.sessions.detail(key)
    return b.session(key)


def _num(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@sessions_app.command("list")
def list_sessions(
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Recent sessions with candidate / injected counts and continuity score."""
    with backend() as b:
        data = _list(b, limit=limit, offset=0, project=project)
    if as_json:
        print_json(data)
        return
    table = Table("session", "project", "started", "prompts", "candidates", "injected", "score", "conf", "judge")
    for s in data["sessions"]:
        table.add_row(s["session_key"], s.get("project") or "", s["started_at"], str(s["prompt_count"]),
                      str(s["candidates"]), str(s["injected"]), _num(s.get("score")), _num(s.get("confidence")),
                      s.get("judge") or "")
    console.print(table)
    console.print(f"{len(data['sessions'])} of {data['total']} sessions")


@sessions_app.command("show")
def show(
    key: str = typer.Argument(..., help="Session key (Claude Code's session_id)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Candidates, injected memories, FTS hits, agent feedback and continuity for one session."""
    with backend() as b:
        data = _detail(b, key)
    if as_json:
        print_json(data)
        return
    s = data["session"]
    console.print(f"[bold]{s['session_key']}[/bold] {s.get('harness') or ''} project={s.get('project')} "
                  f"started={s['started_at']} ended={s.get('ended_at') or '-'} prompts={s['prompt_count']}",
                  highlight=False)
    if s.get("status_line"):
        console.print(s["status_line"], highlight=False, markup=False)
    table = Table("rank", "memory", "source", "inj", "phase", "eff", "pred", "final", "fts", "agent", "n", "rel",
                  "content")
    for m in data["memories"]:
        table.add_row(str(m["rank"]), m["memory_id"], m["source"], "✓" if m["was_injected"] else "",
                      m.get("inject_phase") or "", _num(m.get("effective_score"), 3), _num(m.get("predictor_score"), 3),
                      _num(m.get("final_score"), 3), str(m["fts_hit_count"]), _num(m.get("agent_relevance_score")),
                      str(m["agent_feedback_count"]), _num(m.get("relevance_score")), (m.get("content") or "")[:60])
    console.print(table)
    score = data.get("score")
    if score:
        console.print(f"continuity ({score['judge']}): score={score['score']:.2f} confidence={score['confidence']:.2f} "
                      f"recalled={score['memories_recalled']} used={score['memories_used']} "
                      f"novel={score['novel_context_count']}", highlight=False)
        if score.get("continuity_reasoning"):
            console.print(score["continuity_reasoning"], highlight=False, markup=False)
    else:
        job = data.get("summary_job")
        console.print(f"no continuity score yet (summary job: {job['status'] if job else 'none'})")
    console.print(f"{len(data['prompts'])} prompts, {len(data['checkpoints'])} checkpoints, transcript: "
                  f"{data['transcript']['chars'] if data.get('transcript') else 0} chars", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(sessions_app, name="sessions")
