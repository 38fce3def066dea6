"""The daemon's public schemas, for before/after comparisons of a refactor (issue 34): the OpenAPI document and
the MCP server's tool list (name, description, input and output schema), as one JSON file.

    .venv/bin/python bench/api_schemas.py --out /tmp/schemas-after.json
    PYTHONPATH=/tmp/before-s31/src .venv/bin/python bench/api_schemas.py --out /tmp/schemas-before.json
    diff <(jq -S . /tmp/schemas-before.json) <(jq -S . /tmp/schemas-after.json)

Built in process from the code on the path (`kenning.api.app.create_app`'s `openapi()`, `kenning.mcp.server.build_server`'s
`list_tools()`): no daemon or store is started.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path


def mcp_tools() -> list[dict[str, object]]:
    from kenning.client import KenningClient
    from kenning.mcp.server import build_server

    server = build_server(KenningClient("http://127.0.0.1:9"))
    tools = asyncio.run(server.list_tools())
    return [tool.model_dump(mode="json", exclude_none=True) for tool in tools]


def openapi() -> dict[str, object]:
    import tempfile

    from kenning.api.app import create_app
    from kenning.core.config import load_settings

    with tempfile.TemporaryDirectory() as home:  # the app is built, never started: no store is opened
        return create_app(load_settings(environ={"KENNING_HOME": home})).openapi()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    Path(args.out).write_text(json.dumps({"openapi": openapi(), "mcp_tools": mcp_tools()}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
