"""Skip a real-binary test, with the reason, when its pinned CLI cannot be installed (no npm, no registry)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.harnesses.clis import CliUnavailable, cli_path, version


def require_cli(name: str) -> Path:
    """cli_path, or skip the calling test/fixture with the reason when it cannot be installed."""
    try:
        return cli_path(name)
    except CliUnavailable as exc:
        pytest.skip(f"{name} {version(name)} unavailable: {exc}")
