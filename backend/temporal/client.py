"""Connecting to Temporal (embedded dev server or an external cluster)."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError

from backend.config import TemporalSettings
from backend.temporal.start_signing import SigningClientInterceptor, load_or_create_signing_key

RETRY_FIRST_S = 0.02  # the worker and the API may start before the dev server answers:
RETRY_MAX_S = 0.5     # retry soon at first, then back off


class TemporalUnavailable(RuntimeError):
    pass


async def connect_temporal(
    settings: TemporalSettings, address: str, *, identity: str | None = None,
    app_dir: Path | None = None,
) -> Client:
    """A client with JobCtrl's data converter. Given the app dir, it signs every start,
    signal, update and schedule with the app dir's key (``start_signing``): the worker
    refuses workflows without that signature. Without it, a read-only client."""
    api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    extra: dict = {"identity": identity} if identity else {}
    if app_dir is not None:
        extra["interceptors"] = [SigningClientInterceptor(load_or_create_signing_key(app_dir))]
    return await Client.connect(
        address,
        **extra,
        namespace=settings.namespace,
        data_converter=pydantic_data_converter,
        tls=settings.tls,
        api_key=api_key,
        connect_timeout=timedelta(seconds=3),
    )


async def connect_with_retry(
    settings: TemporalSettings, address: str, *, timeout: float, app_dir: Path | None = None
) -> Client:
    deadline = time.monotonic() + timeout
    pause = RETRY_FIRST_S
    while True:
        try:
            return await connect_temporal(settings, address, app_dir=app_dir)
        except (RuntimeError, RPCError, OSError) as error:
            if time.monotonic() >= deadline:
                raise TemporalUnavailable(
                    f"Temporal at {address} did not answer within {timeout:.0f}s"
                ) from error
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MAX_S)
