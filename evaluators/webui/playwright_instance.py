"""The Playwright that page renderers share: one started per thread and process, stopped at exit."""
from __future__ import annotations

import atexit
import contextlib
import os
import threading

from playwright.sync_api import Playwright, sync_playwright

_playwrights = threading.local()


def shared_playwright() -> Playwright:
    """One started Playwright per thread and process (the sync API allows one per thread)."""
    current = getattr(_playwrights, "instance", None)
    if current is not None and getattr(_playwrights, "pid", None) == os.getpid():
        return current
    instance = sync_playwright().start()
    _playwrights.instance, _playwrights.pid = instance, os.getpid()
    atexit.register(_stop_quietly, instance)
    return instance


def _stop_quietly(instance: Playwright) -> None:
    with contextlib.suppress(Exception):
        instance.stop()


def stop_shared_playwright() -> None:
    """Stop this thread's shared Playwright, if it started one: its event loop keeps running on the
    thread until then, and no other sync Playwright can start on a thread with a running loop."""
    current = getattr(_playwrights, "instance", None)
    if current is None or getattr(_playwrights, "pid", None) != os.getpid():
        return
    _playwrights.instance = None
    _stop_quietly(current)
