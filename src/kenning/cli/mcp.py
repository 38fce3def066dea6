"""`kenning mcp`: run the MCP server over stdio (talks to the daemon)."""

from __future__ import annotations

import typer

from kenning.cli.context import settings


def mcp() -> None:
    """Serve kenning's memory tools to an MCP client over stdio (needs the daemon running)."""
    from kenning.mcp.server import serve_stdio  # the MCP SDK loads only for this command

    cfg = settings()
    serve_stdio(cfg.base_url, cfg.auth_token)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
