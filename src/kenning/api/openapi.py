"""The OpenAPI document states every status a route can answer, including the guard's.

Routes declare their own outcomes (`responses=` for 404/409/…); this adds what applies to
whole classes of routes: 421/401 from the request guard on every route, 403/415 on writes,
400 wherever a parameter or body can be refused by validation below pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from kenning.api.guard import WRITE_METHODS, needs_token
from kenning.api.schemas import ERROR_REF, ErrorOut

ERROR_CONTENT = {"application/json": {"schema": {"$ref": ERROR_REF}}}
GUARD = {
    "400": "Bad input: a value the route cannot accept, JSON too deep or with lone surrogates.",
    "401": "A token is configured and the request did not carry it.",
    "403": "The request's Origin is not this daemon's own (cross-site write refused).",
    "415": "The body is not application/json.",
    "421": "The Host header does not name this daemon (DNS rebinding refused).",
}


def _codes(path: str, method: str, operation: Mapping[str, object]) -> list[str]:
    codes = ["421"]
    if needs_token(path):
        codes.append("401")
    if method.upper() in WRITE_METHODS:
        codes += ["403", "415"]
    if operation.get("parameters") or operation.get("requestBody"):
        codes.append("400")
    return codes


def document(schema: dict[str, Any]) -> dict[str, Any]:
    schema.setdefault("components", {}).setdefault("schemas", {}).setdefault("ErrorOut", ErrorOut.model_json_schema())
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for code in _codes(path, method, operation):
                responses.setdefault(code, {"description": GUARD[code], "content": ERROR_CONTENT})
    return schema


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes,
            ))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
