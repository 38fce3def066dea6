"""One place that maps errors to HTTP: `{"error": "..."}` with a 4xx for caller mistakes."""

from __future__ import annotations

import re
from functools import lru_cache

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from starlette.exceptions import HTTPException as StarletteHTTPException

from kenning.core.errors import KenningError
from kenning.core.limits import VISIBLE_PATTERN
from kenning.core.telemetry import record_error


def _message(err: ErrorDetails) -> str:
    if err.get("type") == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == VISIBLE_PATTERN:
        return "must hold a visible character (not only whitespace, control or zero-width characters)"
    return str(err.get("msg"))


def describe_validation(exc: RequestValidationError | ValidationError) -> str:
    parts = []
    for err in exc.errors():
        if tuple(err.get("loc", ())) == ("body",) and err.get("type") in (
                "model_attributes_type", "dict_type", "dataclass_type"):  # (dataclass: a body read into its event)
            return "request body must be a JSON object"
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {_message(err)}")
    return "invalid request: " + "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(KenningError)
    async def kenning_error(_: Request, exc: KenningError) -> JSONResponse:
        if exc.status_code >= 500:
            record_error("api", str(exc), kind=type(exc).__name__)
        return JSONResponse({"error": str(exc)}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": describe_validation(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        methods = allowed_methods(request) if exc.status_code == 405 else None
        if methods:
            headers["Allow"] = ", ".join(methods)
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=headers)


def allowed_methods(request: Request) -> list[str] | None:
    """Methods documented for the most literal path template matching this path (Starlette's own
    Allow names only the first route it tried); None for paths outside the schema."""
    paths = request.app.openapi().get("paths", {})
    matching = [t for t in paths if _template(t).fullmatch(request.url.path)]
    if not matching:
        return None
    best = min(matching, key=lambda t: t.count("{"))
    return sorted(method.upper() for method in paths[best])


@lru_cache(maxsize=512)
def _template(path: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(path)))
