"""Readiness: can this web process reach what a request needs, the database and the broker?"""
from __future__ import annotations

import contextlib
import logging
import math

from django.conf import settings
from django.db import connections

from monitoring.broker import broker_reachable

logger = logging.getLogger(__name__)


def database_check(*, timeout: float, alias: str = "default") -> None:
    """One ``SELECT 1`` on a connection of its own, opened within ``timeout`` (PostgreSQL gives up
    connecting and running after it); raises when the database does not answer."""
    wrapper = connections[alias]
    params = wrapper.get_connection_params()
    if wrapper.vendor == "postgresql":
        params["connect_timeout"] = max(1, math.ceil(timeout))
        params["options"] = f"{params.get('options', '')} -c statement_timeout={int(timeout * 1000)}".strip()
    raw = wrapper.get_new_connection(params)
    try:
        cursor = raw.cursor()
        cursor.execute("SELECT 1")
        cursor.fetchone()
    finally:
        with contextlib.suppress(Exception):
            raw.close()


def broker_check(*, timeout: float) -> None:
    broker_reachable(settings.CELERY_BROKER_URL, dict(settings.CELERY_BROKER_TRANSPORT_OPTIONS), timeout=timeout)


def readiness() -> dict[str, str]:
    """"ok" or "unavailable" for the database and the broker; what failed is logged, not answered."""
    timeout = settings.MAGEBENCH_READY_TIMEOUT_SECONDS
    checks = {"database": database_check, "broker": broker_check}
    results = {}
    for name, check in checks.items():
        try:
            check(timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - any failure to answer is "not ready", named below
            logger.warning("not ready: the %s did not answer: %s: %s", name, type(exc).__name__, exc)
            results[name] = "unavailable"
        else:
            results[name] = "ok"
    return results
