"""All SQL on api_tokens: per-user bearer tokens of a team server, kept only as sha256 hashes."""

from __future__ import annotations

import hashlib
from typing import TypedDict, cast

from kenning.core.clock import now_iso
from kenning.core.types import Viewer
from kenning.store.backend import Connection


class TokenInfo(TypedDict):
    """A token as listed (never its secret)."""

    id: str
    user: str
    team: str
    created_at: str
    revoked_at: str | None


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def insert_token(conn: Connection, token_id: str, user: str, team: str, secret: str) -> None:
    conn.execute("INSERT INTO api_tokens(id, user_name, team, token_hash, created_at) VALUES (?, ?, ?, ?, ?)",
                 (token_id, user, team, token_hash(secret), now_iso()))


def list_tokens(conn: Connection, *, include_revoked: bool = False) -> list[TokenInfo]:
    where = "" if include_revoked else " WHERE revoked_at IS NULL"
    rows = conn.execute("SELECT id, user_name AS user, team, created_at, revoked_at FROM api_tokens"
                        f"{where} ORDER BY created_at, id").fetchall()
    return [cast(TokenInfo, dict(r)) for r in rows]


def revoke(conn: Connection, id_or_user: str) -> list[str]:
    """Revoke the token with this id, or every live token of this user; returns the ids revoked."""
    rows = conn.execute("SELECT id FROM api_tokens WHERE revoked_at IS NULL AND (id = ? OR user_name = ?)",
                        (id_or_user, id_or_user)).fetchall()
    ids = [r[0] for r in rows]
    conn.executemany("UPDATE api_tokens SET revoked_at = ? WHERE id = ?", [(now_iso(), i) for i in ids])
    return ids


def viewer_for(conn: Connection, secret: str) -> Viewer | None:
    row = conn.execute("SELECT user_name, team FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL",
                       (token_hash(secret),)).fetchone()
    return Viewer(row[0], row[1]) if row else None


def any_live(conn: Connection) -> bool:
    return conn.execute("SELECT 1 FROM api_tokens WHERE revoked_at IS NULL LIMIT 1").fetchone() is not None
