"""All SQL on llm_usage: tokens spent per UTC day, provider and model (the daily budget)."""

from __future__ import annotations

from typing import TypedDict, cast

from kenning.core.clock import now_iso
from kenning.store.backend import StoreDatabase


def add_usage(db: StoreDatabase, day: str, provider: str, model: str, prompt_tokens: int,
              output_tokens: int, *, refused: bool = False) -> None:
    """Add one call's tokens (or one refused call) to the day's row."""
    with db.with_write_tx() as conn:
        conn.execute(
            "INSERT INTO llm_usage(day, provider, model, prompt_tokens, output_tokens, calls, refused,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(day, provider, model) DO UPDATE SET"
            " prompt_tokens = prompt_tokens + excluded.prompt_tokens,"
            " output_tokens = output_tokens + excluded.output_tokens,"
            " calls = calls + excluded.calls, refused = refused + excluded.refused,"
            " updated_at = excluded.updated_at",
            (day, provider, model or "", int(prompt_tokens), int(output_tokens),
             0 if refused else 1, 1 if refused else 0, now_iso()),
        )


def tokens_used(db: StoreDatabase, day: str) -> int:
    row = db.reader().execute(
        "SELECT COALESCE(SUM(prompt_tokens + output_tokens), 0) FROM llm_usage WHERE day = ?", (day,)
    ).fetchone()
    return int(row[0])


class Usage(TypedDict):
    """LLM tokens and calls, per (provider, model) of a day or summed per day."""

    prompt_tokens: int
    output_tokens: int
    calls: int
    refused: int


class ModelUsage(Usage):
    provider: str
    model: str


class DayUsage(Usage):
    day: str


def usage_for_day(db: StoreDatabase, day: str) -> list[ModelUsage]:
    rows = db.reader().execute(
        "SELECT provider, model, prompt_tokens, output_tokens, calls, refused FROM llm_usage"
        " WHERE day = ? ORDER BY provider, model", (day,),
    ).fetchall()
    return [cast(ModelUsage, dict(r)) for r in rows]


def recent_days(db: StoreDatabase, limit: int = 14) -> list[DayUsage]:
    rows = db.reader().execute(
        "SELECT day, SUM(prompt_tokens) AS prompt_tokens, SUM(output_tokens) AS output_tokens,"
        " SUM(calls) AS calls, SUM(refused) AS refused FROM llm_usage GROUP BY day"
        " ORDER BY day DESC LIMIT ?", (limit,),
    ).fetchall()
    return [cast(DayUsage, dict(r)) for r in rows]
