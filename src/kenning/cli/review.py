"""`kenning review`: what kenning learned by itself, grouped by session, and accept / edit / reject.

    kenning review                       # what waits for review, by session
    kenning review --status rejected     # accepted | rejected | learned (everything kenning wrote)
    kenning review --status stale        # rules whose code was deleted or renamed (accept = still holds)
    kenning review accept ID
    kenning review edit ID --content "…" [--type decision]
    kenning review reject ID [--reason "…"]   # kept, never shown unasked again
    kenning review rules                  # per extraction rule: learned / pending / accepted / rejected
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

import typer

from kenning.cli.context import console, fail, print_json
from kenning.cli.memory import backend
from kenning.core.written import account

review_app = typer.Typer(help="Review what kenning learned: accept, edit or reject (non-destructive).",
                         invoke_without_command=True)
STATUSES = ("pending", "accepted", "rejected", "learned", "stale")


@review_app.callback()
def review(
    ctx: typer.Context,
    status: str = typer.Option("pending", "--status", "-s", help="pending | accepted | rejected | learned "
                                                                 "(everything kenning wrote: episodes, claims, commits)"),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
    session: Optional[str] = typer.Option(None, "--session", help="Only this session's memories."),
    limit: int = typer.Option(100, "--limit", "-n", min=1, max=500),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What kenning learned by itself, grouped by the session it came from."""
    if ctx.invoked_subcommand is not None:
        return
    if status not in STATUSES:
        fail(f"--status must be one of {', '.join(STATUSES)}", code=2)
    with backend() as b:
        data = b.review_pending(status=status, project=project, session_key=session, limit=limit)
    if as_json:
        print_json(data)
        return
    if not data["sessions"]:
        console.print(f"nothing {status} for review" if status != "learned" else
                      "kenning has written nothing by itself yet: no session has ended with an episode, claim or "
                      "commit", soft_wrap=True)
        return
    for group in data["sessions"]:
        started = group.get("started_at")
        head = " · ".join(x for x in [started[:16].replace("T", " ") if started
                                      else None, group.get("harness"), group.get("project"),
                                      group.get("session_key") or "no session"] if x)
        console.print(head, style="bold", highlight=False, markup=False)
        if group.get("task"):
            console.print(f"  task: {group['task']}", highlight=False, soft_wrap=True, markup=False)
        if status == "learned":
            kinds = Counter(m["kind"] for m in group["memories"])
            console.print(f"  {account(dict(kinds))}", highlight=False, markup=False)
        for m in group["memories"]:
            state = (m.get("review") or {}).get("status") or ("needs review" if m["needs_review"] else "kept")
            gone = m.get("stale")
            if gone:  # issue 31: its code was deleted or renamed
                state = (f"stale: {gone.get('path')}{':' + str(gone['symbol']) if gone.get('symbol') else ''} "
                         f"{gone.get('reason')} at {str(gone.get('commit') or '?')[:10]}")
            how = f"rule {m['rule']}" if m["kind"] == "claim" and m.get("rule") else None
            console.print("  " + " · ".join(str(x) for x in [f"[{m['id']}] {m['kind']}", m["type"],
                                                         f"confidence {m['confidence']:.2f}", how, state] if x),
                          highlight=False, markup=False)
            console.print(f"      {' '.join(m['content'].split())[:300]}", highlight=False, soft_wrap=True,
                          markup=False)
    console.print(f"{sum(len(g['memories']) for g in data['sessions'])} of {data['total']} {status}")


@review_app.command("accept")
def accept(memory_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """Vouch for a learned memory: no longer needs review, user-verified (a standing rule)."""
    with backend() as b:
        data = b.review_accept(memory_id)
    print_json(data) if as_json else console.print(f"accepted {data['id']}")


@review_app.command("edit")
def edit(
    memory_id: str = typer.Argument(...),
    content: Optional[str] = typer.Option(None, "--content", "-c", help="The corrected text."),
    type: Optional[str] = typer.Option(None, "--type", "-t", help="The corrected type."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Correct a learned memory, then accept it."""
    if content is None and type is None:
        fail("give --content and/or --type", code=2)
    body = {k: v for k, v in {"content": content, "type": type}.items() if v is not None}
    with backend() as b:
        data = b.review_edit(memory_id, body)
    print_json(data) if as_json else console.print(f"edited and accepted {data['id']}")


@review_app.command("reject")
def reject(
    memory_id: str = typer.Argument(...),
    reason: Optional[str] = typer.Option(None, "--reason", "-r"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Reject a learned memory: kept (a query still finds it), never shown unasked again."""
    with backend() as b:
        data = b.review_reject(memory_id, reason=reason)
    print_json(data) if as_json else console.print(f"rejected {data['id']} (kept; not shown unasked)")


@review_app.command("rules")
def rules(as_json: bool = typer.Option(False, "--json")) -> None:
    """Per extraction rule: how many were learned, wait for review, were accepted and rejected."""
    with backend() as b:
        data = b.review_rules()
    if as_json:
        print_json(data)
        return
    if not data["rules"]:
        console.print("no learned memories yet, so no rule to report: each rule that learns one (a claim the agent "
                      "or you made in a session) shows here with how many were accepted and rejected in review",
                      highlight=False, soft_wrap=True)
        return
    for r in data["rules"]:
        share = "-" if r["rejected_share"] is None else f"{r['rejected_share']:.0%}"
        console.print(f"{r['rule']:<28} learned {r['learned']:>5}  pending {r['pending']:>5}  "
                      f"accepted {r['accepted']:>4}  rejected {r['rejected']:>4}  rejected share {share}",
                      highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
