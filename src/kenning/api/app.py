"""FastAPI app factory: the daemon's HTTP surface (OpenAPI at /openapi.json).

Routers are registered here, one line per resource.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from kenning import __version__
from kenning.api.errors import install_error_handlers
from kenning.api.foreground import ForegroundMark
from kenning.api import openapi
from kenning.api.guard import RequestGuard
from kenning.api.replay import SpoolReplayer
from kenning.api.session_guard import hook_guard
from kenning.api.routes import health, hooks, memory, sessions
from kenning.api.routes import hook_replay
from kenning.api.routes import analytics, dashboard, diagnostics, timeline
from kenning.api.routes import code as code_routes
from kenning.api.routes import documents, graph
from kenning.api.routes import export as export_routes
from kenning.api.routes import feedback as feedback_routes
from kenning.api.routes import observer as observer_routes
from kenning.api.routes import ingest as ingest_routes
from kenning.api.routes import pipeline as pipeline_routes
from kenning.api.routes import predictor as predictor_routes
from kenning.api.routes import review as review_routes
from kenning.core.config import Settings
from kenning.service import Kenning


def create_app(settings: Settings, kenning: Kenning | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        service = kenning or Kenning(settings)
        service.start()
        app.state.kenning = service
        app.state.replayer = SpoolReplayer(service)  # hook events spooled while the daemon was away
        app.state.replayer.kick(stale=True)
        app.state.replayer.watch()  # sessions of harnesses without a session-end event end when idle
        try:
            yield
        finally:
            app.state.replayer.stop_watching()
            service.close()

    app = FastAPI(title="kenning", version=__version__, lifespan=lifespan,
                  description="Local-first memory for AI coding agents.")
    install_error_handlers(app)
    app.add_middleware(RequestGuard, settings=settings)
    app.add_middleware(ForegroundMark)  # hooks and recalls: background workers step aside (issue 36)
    app.include_router(health.router)
    app.include_router(memory.router)
    app.include_router(export_routes.router)
    app.include_router(hooks.router, dependencies=[Depends(hook_guard)])  # the spool replay kick (ownership: k.hooks)
    app.include_router(hook_replay.router, dependencies=[Depends(hook_guard)])  # a remote hook's spool
    app.include_router(feedback_routes.router)
    app.include_router(sessions.router)
    app.include_router(diagnostics.router)
    app.include_router(analytics.router)
    app.include_router(timeline.router)
    app.include_router(graph.router)
    app.include_router(code_routes.router)
    app.include_router(documents.router)
    app.include_router(ingest_routes.router)
    app.include_router(pipeline_routes.router)
    app.include_router(predictor_routes.router)
    app.include_router(observer_routes.router)
    app.include_router(review_routes.router)
    dashboard.mount(app)
    openapi.install(app)
    return app

