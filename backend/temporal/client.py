"""Connecting to Temporal (embedded dev server or an external cluster)."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import timedelta

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError

from backend.config import TemporalSettings

RETRY_FIRST_S = 0.02  # the worker and the API may start before the dev server answers:
RETRY_MAX_S = 0.5     # retry soon at first, then back off


class TemporalUnavailable(RuntimeError):
    pass


async def connect_temporal(
    settings: TemporalSettings, address: str, *, identity: str | None = None
) -> Client:
    api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    extra = {"identity": identity} if identity else {}
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
    settings: TemporalSettings, address: str, *, timeout: float
) -> Client:
    deadline = time.monotonic() + timeout
    pause = RETRY_FIRST_S
    while True:
        try:
            return await connect_temporal(settings, address)
        except (RuntimeError, RPCError, OSError) as error:
            if time.monotonic() >= deadline:
                raise TemporalUnavailable(
                    f"Temporal at {address} did not answer within {timeout:.0f}s"
                ) from error
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MAX_S)
