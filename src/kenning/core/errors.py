"""Small named exceptions; the API maps each to one HTTP status in one place."""


class KenningError(Exception):
    """Base class for every error kenning raises on purpose."""

    status_code = 500


class InvalidInput(KenningError):
    """The caller sent something we cannot accept (HTTP 400/422)."""

    status_code = 400


class Forbidden(KenningError):
    """The caller may not do this (HTTP 403): another user's session, a route closed to user tokens."""

    status_code = 403


class NotFound(KenningError):
    """The thing asked for does not exist (HTTP 404)."""

    status_code = 404


class Conflict(KenningError):
    """The request clashes with the current state (HTTP 409)."""

    status_code = 409


class ConfigError(KenningError):
    """config.yaml or an environment variable is invalid; the message names the fix."""

    status_code = 500


class ProviderError(KenningError):
    """An embedding or LLM provider failed (timeout, bad answer, unreachable)."""

    status_code = 502


class StoreError(KenningError):
    """The database could not do what was asked (locked too long, corrupt, …)."""

    status_code = 503


class DiskFull(StoreError):
    """The disk holding the database is full (SQLITE_FULL / ENOSPC): HTTP 507, nothing was written."""

    status_code = 507
