"""`kenning token create|list|revoke`: per-user bearer tokens of a team server.

These commands open the store of this KENNING_HOME directly (whoever can read its database is
the server's administrator); the daemon sees a new or revoked token at its next request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from kenning.cli.backend import LocalBackend
from kenning.cli.context import console, print_json
from kenning.cli.memory import backend
from kenning.cli.tables import Col, print_table

if TYPE_CHECKING:
    from kenning.service import Kenning

token_app = typer.Typer(no_args_is_help=True, help="Per-user bearer tokens (team server).")


@contextmanager
def _service() -> Iterator["Kenning"]:
    with backend(prefer_daemon=False) as local:
        assert isinstance(local, LocalBackend)  # tokens live in this home's own store
        yield local.kenning


@token_app.command("create")
def create(
    name: str = typer.Argument(..., help="The user the token belongs to (the author of what they write)."),
    team: str = typer.Option("default", "--team", help="The user's team: they see its team and project memories."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Create a token for NAME and print it once (only its hash is stored)."""
    with _service() as k:
        token = k.create_token(name, team)
    if as_json:
        print_json(token)
        return
    console.print(f"token [bold]{token['id']}[/bold] for {name} (team {team}); shown once, keep it:", highlight=False)
    print(token["token"])


@token_app.command("list")
def list_(
    all_: bool = typer.Option(False, "--all", help="Include revoked tokens."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Tokens by id, user and team (never the secret)."""
    with _service() as k:
        tokens = k.list_tokens(include_revoked=all_)
    if as_json:
        print_json(tokens)
        return
    if not tokens:
        console.print("no tokens: this daemon serves its own user only")
        return
    print_table(console, [Col("id", "id", "id"), Col("user", "user"), Col("team", "team"),
                          Col("created", lambda t: t["created_at"][:16].replace("T", " "), max_width=16),
                          Col("revoked", lambda t: (t["revoked_at"] or "")[:16].replace("T", " "), max_width=16)],
                tokens)


@token_app.command("revoke")
def revoke(id_or_name: str = typer.Argument(..., help="A token id, or a user name (all their tokens).")) -> None:
    """Revoke a token (or every token of a user); requests with it get 401 from then on."""
    with _service() as k:
        ids = k.revoke_token(id_or_name)
    console.print(f"revoked {', '.join(ids)}")


def register(app: typer.Typer) -> None:
    app.add_typer(token_app, name="token")
