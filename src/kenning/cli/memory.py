"""Memory commands: remember, recall, show, edit, forget, recover, list, stats (import and export: cli.portability)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Optional

import typer

from kenning.cli.backend import Backend, open_backend
from kenning.cli.context import console, fail, print_json, settings
from kenning.cli.tables import Col, fmt, print_table
from kenning.core.clock import parse_iso, to_iso, utcnow
from kenning.core.errors import KenningError
from kenning.core.types import MEMORY_TYPES, USER_TYPES
from kenning.retrieval.match import CONFIDENT, match_of

if TYPE_CHECKING:
    from kenning.localstore import StoreStats
    from kenning.retrieval.config import ConfigExplained

LEG_WORDS = {"bm25": "words", "vector": "meaning", "graph": "graph", "hints": "hints"}
# --preset's help, written out so that `recall` need not import retrieval.config (pydantic) to start;
# tests/cli/test_first_week_cli.py holds it to retrieval.config.PRESETS.
PRESET_HELP = ("Recall preset: bm25 (keywords only), dense (vectors only), hybrid (both, fused), default (hybrid "
               "plus session context), or graph, graph_boost, dampening, rerank, hints, context, code, full "
               "(docs/recall.md). Default: the daemon's configuration.")
EMPTY_STORE = (
    "no memories yet. To get some:\n"
    "  kenning connect claude-code    Claude Code remembers and recalls through hooks\n"
    "  kenning ingest git             learn from this repository's history\n"
    '  kenning remember "We deploy with scripts/deploy.sh"'
)


@contextmanager
def backend(*, prefer_daemon: bool = True) -> Iterator[Backend]:
    """The daemon when it answers (else the local store); KenningError → one line and an exit code."""
    try:
        b = open_backend(settings, prefer_daemon=prefer_daemon)
    except KenningError as exc:
        fail(str(exc))
    try:
        yield b
    except KenningError as exc:
        fail(str(exc), code=2 if 400 <= getattr(exc, "status_code", 500) < 500 else 1)
    finally:
        b.close()


def remember(
    content: str = typer.Argument(..., help="What to remember."),
    type: Optional[str] = typer.Option(
        None, "--type", "-t", help=f"Memory type: {', '.join(USER_TYPES)}. Default: fact, or constraint for a rule."),
    importance: float = typer.Option(0.5, min=0.0, max=1.0, help="0–1; drives the baseline ranking."),
    tag: list[str] = typer.Option([], "--tag", help="Tag (repeatable)."),
    project: Optional[str] = typer.Option(
        None, "--project", "-p", help="Project the memory belongs to. Default: this directory's project, by the "
                                      "hooks' rule (the git repository's folder name, else this folder's name)."),
    global_: bool = typer.Option(False, "--global", "-g", help="For every project (no project)."),
    pinned: bool = typer.Option(False, "--pin", help="Always rank first."),
    scope: str = typer.Option("project", "--scope", help="personal | project | team | org; with team.url set, "
                                                          "team and org memories go to the team server."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Store a memory (exact duplicates are detected, not stored twice)."""
    if global_ and project:
        fail("choose one of --project and --global", code=2)
    if type is not None and type not in USER_TYPES:
        fail(f"unknown type {type!r}: choose from {', '.join(USER_TYPES)}", code=2)
    where = None if global_ else project or project_here()
    with backend() as b:
        body = {"content": content, "importance": importance, "tags": tag, "project": where,
                "pinned": pinned, "source": "cli", "scope": scope}
        result = b.remember({**body, "type": type} if type else body)
    if as_json:
        print_json({**result, "project": where})
        return
    said = "already known as" if result["deduped"] else "remembered"
    if where is None:
        place = "for every project (--global)"
    elif project:
        place = f"in project {where}"
    else:
        place = f"in project {where} (this directory's; -p NAME for another, --global for every project)"
    console.print(f"{said} [bold]{result['id']}[/bold] {place}", highlight=False, soft_wrap=True)


def project_here() -> str | None:
    """This directory's project, by the rule the hooks use for a session's project (one function)."""
    from kenning.hooks.adapters.hookrun import project_of

    return project_of(os.getcwd())


def _when(value: str | None, option: str) -> str | None:
    """`--since/--until`: an ISO date or time, or an age like 30m, 12h, 7d, 2w (before now)."""
    if not value:
        return None
    text = value.strip()
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if text[:-1].isdigit() and text[-1:].lower() in units:
        return to_iso(utcnow() - timedelta(**{units[text[-1].lower()]: int(text[:-1])}))
    try:
        return to_iso(parse_iso(text))
    except KenningError:
        fail(f"{option} {value!r}: use an ISO date/time (2026-05-01, 2026-05-01T09:30) or an age (30m, 12h, 7d, 2w)",
             code=2)
        raise


def recall(
    query: str = typer.Argument(..., help="What to look for."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", min=1, max=200,
                                        help="How many memories (default: recall.default_limit, 10)."),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
    type: list[str] = typer.Option([], "--type", "-t", help="Only these types (repeatable)."),
    tag: list[str] = typer.Option([], "--tag"),
    since: Optional[str] = typer.Option(None, help="Only memories created at or after this (ISO date/time or 7d, 12h, 2w)."),
    until: Optional[str] = typer.Option(None, help="Only memories created before this (ISO date/time or 7d, 12h, 2w)."),
    preset: Optional[str] = typer.Option(None, help=PRESET_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    show_all: bool = typer.Option(False, "--all", "-a", help="Also list weak matches (ranked, but not an answer)."),
    explain: bool = typer.Option(
        False, "--explain", help="Also print the effective recall config (preset, legs, stages, rrf_k, candidate_pool,"
        " diversity): config.yaml's recall settings merged with the preset, as docs/recall.md describes."),
) -> None:
    """Find memories by words and meaning; each hit says how well it matches (strong, likely; weak ones with --all)."""
    if preset is not None:
        from kenning.retrieval.config import PRESETS

        if preset not in PRESETS:
            fail(f"unknown preset {preset!r}: choose from {', '.join(PRESETS)}", code=2)
    body = {"query": query, "limit": limit, "project": project, "types": type or None,
            "tags": tag or None, "preset": preset, "since": _when(since, "--since"), "until": _when(until, "--until")}
    with backend() as b:
        results = b.recall(body)
        config = b.recall_config(preset) if explain else None  # what the daemon (or the local store) ran
        where = b.where
    if as_json:
        print_json({"config": config, "results": results} if explain else results)
        return
    if config is not None:
        console.print(_explained(config, where), highlight=False)
    if not results:
        console.print("no memories match" + (" (try without --since/--until)" if since or until else ""))
        return
    for hit in results:
        hit.setdefault("match", match_of(hit["legs"]))
    shown = results if show_all else [r for r in results if r["match"] in CONFIDENT]
    weak = len(results) - len([r for r in results if r["match"] in CONFIDENT])
    if not shown:
        console.print(f"no confident match for {query!r}" + (f" ({weak} weak match{'es' if weak != 1 else ''}: "
                      "--all lists them)" if weak else ""), highlight=False, soft_wrap=True)
        return
    print_table(console, [
        Col("id", "id", "id"), Col("match", "match", max_width=6), Col("type", "type", max_width=10),
        Col("found by", lambda r: " + ".join(LEG_WORDS.get(k, k) for k in r["legs"]), max_width=24),
    ], shown, detail=Col("content", "content"))
    if weak and not show_all:
        console.print(f"{weak} weak match{'es' if weak != 1 else ''} not shown (--all lists them)", style="dim",
                      highlight=False)


def _explained(config: ConfigExplained, where: str) -> str:
    """The effective recall config in one block (`kenning recall --explain`), as `where` runs it."""
    topic = config["topic_diversity"]
    return "\n".join([
        f"recall config (preset {config['preset']}, as the {where} runs it):",
        f"  legs {' + '.join(config['legs'])}   fused by weighted RRF, rrf_k {config['rrf_k']},"
        f" candidate_pool {config['candidate_pool']} per leg" + ("   hints on" if config["hints"] else ""),
        f"  stages {', '.join(config['stages']) or '(none)'}",
        f"  diversity {'on' if config['diversity'] else 'only with a character budget'}"
        f" (threshold {topic['threshold']}, decay {topic['decay']}, floor {topic['floor']})",
    ])


def show(memory_id: str, as_json: bool = typer.Option(False, "--json")) -> None:
    """Show one memory with its history."""
    with backend() as b:
        memory = b.get(memory_id)
    if as_json:
        print_json(memory)
        return
    for key in ("id", "type", "project", "importance", "pinned", "tags", "source", "created_at",
                "updated_at", "is_deleted", "superseded_by", "access_count"):
        console.print(f"[bold]{key}[/bold]: {memory.get(key)}", highlight=False)
    life = memory.get("lifecycle") or {}
    if life:
        fades = (f"fades by half every {life['half_life_days']} days" if life["half_life_days"]
                 else "does not fade")
        console.print(f"[bold]trust[/bold]: {life['trust']}  confidence {life['confidence']:.2f} → now "
                      f"{life['current_confidence']:.2f} ({fades}"
                      + (f", pruned after {life['prunes_after']}" if life.get("prunes_after") else "") + ")",
                      highlight=False)
    claim = (memory.get("metadata") or {}).get("claim")
    if claim or memory.get("needs_review"):
        console.print(f"[bold]needs_review[/bold]: {bool(memory.get('needs_review'))}", highlight=False)
    if isinstance(claim, dict):  # how a learned memory was judged a claim (issue 22): rule, speaker, acceptance, …
        accepted = {True: "accepted", False: "contradicted", None: "-"}.get(claim.get("accepted"), "-")
        console.print(f"[bold]claim[/bold]: rule {claim.get('rule')}  speaker {claim.get('speaker')}  {accepted}"
                      f"  said {claim.get('repetition', 1)}×  confidence {claim.get('confidence')}"
                      + (f"  cues {', '.join(claim.get('cues') or [])}" if claim.get("cues") else "")
                      + (f"\n  answering: {claim['antecedent']}" if claim.get("antecedent") else ""), highlight=False)
    console.print(f"\n{memory['content']}\n", highlight=False)
    for h in memory.get("history", []):
        console.print(f"  {h['created_at']}  {h['event']}  {h.get('actor') or ''}", highlight=False)


def edit(
    memory_id: str,
    content: Optional[str] = typer.Option(None, help="New content (re-embedded)."),
    type: Optional[str] = typer.Option(None, "--type", "-t"),
    importance: Optional[float] = typer.Option(None, min=0.0, max=1.0),
    pin: Optional[bool] = typer.Option(None, "--pin/--unpin"),
    tag: Optional[list[str]] = typer.Option(None, "--tag", help="Replace tags (repeatable)."),
) -> None:
    """Change a memory; the old values stay in its history."""
    changes = {k: v for k, v in {"content": content, "type": type, "importance": importance,
                                 "pinned": pin, "tags": tag}.items() if v is not None}
    if not changes:
        fail("nothing to change: pass --content, --type, --importance, --pin/--unpin or --tag", code=2)
    with backend() as b:
        memory = b.edit(memory_id, changes)
    console.print(f"updated [bold]{memory['id']}[/bold]")


def forget(
    memory_id: str,
    purge: bool = typer.Option(False, "--purge", help="Hard delete (cannot be recovered)."),
    reason: Optional[str] = typer.Option(None, help="Why (kept in history)."),
) -> None:
    """Tombstone a memory (recoverable), or purge it for good."""
    with backend() as b:
        b.forget(memory_id, purge=purge, reason=reason)
    console.print(f"{'purged' if purge else 'forgot'} [bold]{memory_id}[/bold]")


def recover(memory_id: str) -> None:
    """Bring back a forgotten (tombstoned) memory."""
    with backend() as b:
        b.recover(memory_id)
    console.print(f"recovered [bold]{memory_id}[/bold]")


def list_(
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000),
    offset: int = typer.Option(0, min=0),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
    type: Optional[str] = typer.Option(None, "--type", "-t"),
    deleted: bool = typer.Option(False, "--deleted", help="Include forgotten memories."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List memories, newest first."""
    if type is not None and type not in MEMORY_TYPES:
        fail(f"unknown type {type!r}: choose from {', '.join(USER_TYPES)} (or kenning's own: "
             f"{', '.join(sorted(MEMORY_TYPES - set(USER_TYPES)))})", code=2)
    with backend() as b:
        page = b.list(limit=limit, offset=offset, project=project, type=type, include_deleted=deleted)
    if as_json:
        print_json(page)
        return
    if not page["items"]:
        console.print(EMPTY_STORE if not page["total"] and not (project or type) else
                      f"no memories on this page ({page['total']} match; try a smaller --offset)")
        return
    print_table(console, [
        Col("id", "id", "id"), Col("created", lambda m: m["created_at"][:16].replace("T", " "), max_width=16),
        Col("type", "type", max_width=10), Col("project", "project", max_width=20),
    ], page["items"], detail=Col("content", lambda m: ("(forgotten) " if m["is_deleted"] else "") + m["content"]),
        title=f"{page['total']} memories" + (f", showing {offset + 1}-{offset + len(page['items'])}"
                                             if page["total"] > len(page["items"]) else ""))


def stats(as_json: bool = typer.Option(False, "--json")) -> None:
    """Counts by type and project, database size, embedding model."""
    with backend() as b:
        data = b.stats()
    if as_json:
        print_json(data)
        return
    for line in stats_lines(data):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def stats_lines(data: StoreStats) -> list[str]:
    """`kenning stats` as a person reads it: counts in words, most common first."""
    def counted(counts: dict[str, int], none: str) -> str:
        items = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        return ", ".join(f"{name or none} {n}" for name, n in items) or "-"

    extra = [f"{n} {word}" for n, word in ((data.get("deleted"), "forgotten"), (data.get("superseded"), "superseded"),
                                           (data.get("pinned"), "pinned")) if n]
    return [
        f"memories    {data['live']} live" + (f" ({', '.join(extra)})" if extra else ""),
        f"by type     {counted(data['by_type'], '?')}",
        f"by project  {counted(data['by_project'], '(every project)')}",
        f"store       {data['db_path']} ({_size(data['db_bytes'])})",
        f"embeddings  {data['embedding_model']}",
    ]


def register(app: typer.Typer) -> None:
    for fn, name in ((remember, "remember"), (recall, "recall"), (show, "show"), (edit, "edit"),
                     (forget, "forget"), (recover, "recover"), (list_, "list"), (stats, "stats")):
        app.command(name)(fn)
