"""The FastAPI application: typed routes, typed errors, loopback-only security."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from backend import projections
from backend.api.context import ApiContext
from backend.api.document import require_discriminator_tags
from backend.api.errors import install_error_handlers
from backend.api.guard import RequestGuardMiddleware, declare_guard_responses
from backend.api.routers import (
    activity,
    conditions,
    events,
    health,
    jobs,
    llm_check,
    operations,
    pipeline,
    profile,
    profile_improve,
    schedule,
    secrets,
    settings,
    sources,
    spend,
    workflow_runs,
)
from backend.api.routers import applications as application_routes
from backend.api.routers import apply as apply_routes
from backend.api.routers import contacts as contact_routes
from backend.api.security import LoopbackHostMiddleware, require_token
from backend.api.sse import EventTail
from backend.config import AppPaths, load_settings
from backend.process.heap_trim import trim_after_bursts
from backend.store.db import Database
from backend.temporal.continuations import ProfileOutboxDrainer


def create_app(
    paths: AppPaths, *, api_token: str, temporal_address: str, sse_keepalive_s: float = 15
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = await Database.open(paths.database)
        await projections.catch_up(db)  # appends fold themselves; this takes any backlog
        tail = EventTail(paths.database)
        await tail.start()
        context = ApiContext(
            paths=paths, settings=load_settings(paths), db=db, tail=tail,
            api_token=api_token, temporal_address=temporal_address,
            sse_keepalive_s=sse_keepalive_s,
        )
        app.state.context = context
        # Condition-driven preparation: drain the profile outbox now and on every save.
        app.state.profile_drainer = ProfileOutboxDrainer(
            db, paths, context.temporal,
            lambda: context.settings.stage_heartbeat_timeout_s)
        app.state.profile_drainer.kick()
        # memory back after big pages: SQLite's page caches, then the heap
        trimmer = asyncio.create_task(trim_after_bursts(release=db.release_memory))
        try:
            yield
        finally:
            trimmer.cancel()
            await app.state.profile_drainer.stop()
            await tail.stop()
            await db.close()

    app = FastAPI(
        title="JobCtrl local API",
        version="1",
        description="Loopback-only API of a running JobCtrl instance. Every route but "
        "/v1/health needs the bearer token from runtime.json.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served below, behind the token like every other route
    )
    install_error_handlers(app)
    generate_openapi = app.openapi

    def openapi_with_guard_responses() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = require_discriminator_tags(
                declare_guard_responses(generate_openapi()))
        return app.openapi_schema

    app.openapi = openapi_with_guard_responses

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(require_token)])
    async def openapi_document() -> dict:
        return app.openapi()

    app.add_middleware(LoopbackHostMiddleware)
    # Added last, so outermost: even a refused Host gets a request id, and nothing inside
    # can answer a 500 outside the error envelope.
    app.add_middleware(RequestGuardMiddleware)
    for module in (health, pipeline, events, jobs, profile, settings, spend, secrets,
                   workflow_runs, activity, operations, schedule, conditions, llm_check, sources):
        app.include_router(module.router)
    app.include_router(contact_routes.router)
    app.include_router(apply_routes.router)
    app.include_router(application_routes.router)
    app.include_router(profile_improve.router)
    return app
