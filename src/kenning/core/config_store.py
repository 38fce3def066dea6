"""Which database holds the store: a local SQLite file (default) or a PostgreSQL server (teams)."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite", description="sqlite: $KENNING_HOME/memories.db on this machine; postgres: the server at `url`"
        " (needs the pgvector extension), shared by a team's daemons.",
    )
    url: str | None = Field(
        None, description="postgres only: postgresql://user[:password]@host[:port]/database. A password is"
        " better given by PGPASSWORD or ~/.pgpass than written here.",
    )

    @model_validator(mode="after")
    def _check_url(self) -> StoreSettings:
        if self.backend == "sqlite":
            if self.url:
                raise ValueError("store.url is only read with store.backend: postgres")
            return self
        if not self.url:
            raise ValueError("store.backend postgres needs store.url (postgresql://user@host:5432/db)")
        parts = urlsplit(self.url)
        if parts.scheme not in ("postgresql", "postgres"):
            raise ValueError(f"store.url must start with postgresql:// (got {parts.scheme or 'no'} scheme)")
        try:
            parts.port
        except ValueError as exc:
            raise ValueError(f"store.url has a bad port: {exc}") from exc
        if not parts.hostname and "host=" not in parts.query:
            raise ValueError("store.url names no host (postgresql://user@HOST:5432/db)")
        if not parts.path.strip("/"):
            raise ValueError("store.url names no database (postgresql://user@host:5432/DATABASE)")
        return self
