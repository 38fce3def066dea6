"""One timestamp format everywhere: ISO 8601 UTC with milliseconds and a 'Z'.

Lexicographic order of these strings equals time order, so SQL can compare them.
"""

from __future__ import annotations

from datetime import datetime, timezone

from kenning.core.errors import InvalidInput


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def to_iso(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    return f"{dt.year:04d}" + dt.strftime("-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return to_iso(utcnow())


def parse_iso(value: str | datetime) -> datetime:
    """Parse an ISO 8601 string (naive means UTC); raise InvalidInput with the bad value."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidInput(f"not an ISO 8601 timestamp: {value!r}") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def normalize_iso(value: str | datetime) -> str:
    try:
        return to_iso(parse_iso(value))
    except OverflowError as exc:  # e.g. 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise InvalidInput(f"timestamp out of range once converted to UTC: {value!r}") from exc


def days_between(earlier: str | datetime, later: str | datetime) -> float:
    return max(0.0, (parse_iso(later) - parse_iso(earlier)).total_seconds() / 86400.0)
