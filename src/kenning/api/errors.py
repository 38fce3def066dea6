"""One place that maps errors to HTTP: `{"error": "..."}` with a 4xx for caller mistakes."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kenning.core.errors import KenningError
from kenning.core.telemetry import record_error


def _describe(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg')}")
    return "invalid request: " + "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(KenningError)
    async def kenning_error(_: Request, exc: KenningError) -> JSONResponse:
        if exc.status_code >= 500:
            record_error("api", str(exc), kind=type(exc).__name__)
        return JSONResponse({"error": str(exc)}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _describe(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)
