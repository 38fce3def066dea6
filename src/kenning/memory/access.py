"""Who may read and write memories: per-user bearer tokens of a team server, and the local user.

A token is `kn_` + 32 random bytes (url-safe); only its sha256 is stored (store.tokens), so the
secret is shown once, by `kenning token create`. Once any live token exists the daemon is a team
server: every API request needs a bearer (a user token, or the configured `auth_token`, which acts
as the server's own user and sees everything).
"""

from __future__ import annotations

import getpass
import re
import secrets
import uuid
from typing import TypedDict

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.types import Viewer
from kenning.store import tokens as store
from kenning.store.backend import StoreDatabase
from kenning.store.tokens import TokenInfo

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
DEFAULT_TEAM = "default"


def local_user() -> str:
    """The author of memories written on a single-user daemon: the OS user, else 'local'."""
    try:
        return getpass.getuser() or "local"
    except Exception:  # no user name in the environment or the password database
        return "local"


def local_viewer() -> Viewer:
    return Viewer(local_user(), None, sees_all=True)


class NewToken(TypedDict):
    """A token just made: the only answer that carries its secret."""

    id: str
    user: str
    team: str
    token: str


def create_token(db: StoreDatabase, user: str, team: str = DEFAULT_TEAM) -> NewToken:
    """A new token for `user` in `team`; the answer is the only place the secret ever appears."""
    for what, value in (("user name", user), ("team", team)):
        if not NAME_PATTERN.match(value or ""):
            raise InvalidInput(f"{what} {value!r}: use 1-64 letters, digits, '_', '.', '@' or '-'")
    if user == local_user():
        raise InvalidInput(f"{user!r} is this server's own user (it writes without a token); pick another name")
    token_id, secret = uuid.uuid4().hex[:8], "kn_" + secrets.token_urlsafe(32)
    with db.with_write_tx() as conn:
        store.insert_token(conn, token_id, user, team, secret)
    return {"id": token_id, "user": user, "team": team, "token": secret}


def list_tokens(db: StoreDatabase, *, include_revoked: bool = False) -> list[TokenInfo]:
    return store.list_tokens(db.reader(), include_revoked=include_revoked)


def revoke_token(db: StoreDatabase, id_or_user: str) -> list[str]:
    with db.with_write_tx() as conn:
        ids = store.revoke(conn, id_or_user)
    if not ids:
        raise NotFound(f"no live token with id or user {id_or_user!r}")
    return ids


def viewer_for_token(db: StoreDatabase, secret: str) -> Viewer | None:
    return store.viewer_for(db.reader(), secret)


def team_mode(db: StoreDatabase) -> bool:
    """True once a live user token exists: requests without a bearer are refused."""
    return store.any_live(db.reader())
