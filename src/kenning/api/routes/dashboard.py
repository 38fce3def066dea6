"""The dashboard: built assets shipped in `kenning/dashboard/static`, served at `/`."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parents[2] / "dashboard" / "static"
_MISSING = (
    "<!doctype html><title>kenning</title><h1>kenning</h1><p>The dashboard assets are missing "
    "from this install. Rebuild them with <code>cd dashboard &amp;&amp; npm ci &amp;&amp; npm run build</code>."
    "</p><p>The API is at <a href='/docs'>/docs</a>.</p>"
)

router = APIRouter(include_in_schema=False)


@router.get("/")
def index():
    page = STATIC / "index.html"
    if not page.exists():
        return HTMLResponse(_MISSING)
    return FileResponse(page, headers={"Cache-Control": "no-cache"})


def mount(app: FastAPI) -> None:
    """Serve `/` and the hashed assets under `/assets` (long-cacheable)."""
    app.include_router(router)
    if (STATIC / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=STATIC / "assets"), name="dashboard-assets")
