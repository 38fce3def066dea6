"""`kenning sessions list|show`: what each session was offered, injected, rated and scored."""

from __future__ import annotations

from typing import Optional

import typer

from kenning.cli.context import console, print_json
from kenning.cli.memory import backend
from kenning.cli.tables import Col, fmt, print_table

sessions_app = typer.Typer(no_args_is_help=True, help="Inspect agent sessions.")


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
        Col("cand", "candidates", "num"), Col("inj", "injected", "num"),
        Col("score", lambda s: fmt(s.get("score")), "num"), Col("conf", lambda s: fmt(s.get("confidence")), "num"),
    ], data["sessions"], detail=Col("project · started · judge", lambda s: " · ".join(
        [s.get("project") or "-", s["started_at"][:16].replace("T", " "), s.get("judge") or "not judged"])))
    console.print(f"{len(data['sessions'])} of {data['total']} sessions")


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
    console.print(f"[bold]{s['session_key']}[/bold] {s.get('harness') or ''} project={s.get('project')} "
                  f"started={s['started_at']} ended={s.get('ended_at') or '-'} prompts={s['prompt_count']}",
                  highlight=False)
    if s.get("status_line"):
        console.print(s["status_line"], highlight=False, markup=False)
    print_table(console, [
        Col("#", "rank", "num"), Col("memory", "memory_id", "id"), Col("source", "source", max_width=10),
        Col("inj", lambda m: "✓" if m["was_injected"] else "", max_width=3),
        Col("phase", lambda m: m.get("inject_phase") or "", max_width=10),
        Col("eff", lambda m: fmt(m.get("effective_score"), 3), "num"),
        Col("pred", lambda m: fmt(m.get("predictor_score"), 3), "num"),
        Col("final", lambda m: fmt(m.get("final_score"), 3), "num"), Col("fts", "fts_hit_count", "num"),
        Col("agent", lambda m: fmt(m.get("agent_relevance_score")) + f"×{m['agent_feedback_count']}", "num"),
        Col("rel", lambda m: fmt(m.get("relevance_score")), "num"),
    ], data["memories"], detail=Col("content", "content"))
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
                  f"{transcript['chars'] if (transcript := data.get('transcript')) else 0} chars", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(sessions_app, name="sessions")
