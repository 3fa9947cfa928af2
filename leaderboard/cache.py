"""Cached reads of what finished submissions make immutable: boards, their exports, the home page's
overview and the analysis pages.

Every entry's key holds the current *generations* of what it shows: counters kept in the cache itself
(and in the database too when the cache is each process's own), one for everything and one per board
(and one for the home page, which shows every board). Any write that changes what a board shows
calls ``leaderboard.changes.boards_changed`` with the boards it changes (or none: every board), which moves their
counters on, so every entry of those boards written before it is never read again (and expires on
its own), while the other boards' entries stay. Keys also hold everything the entry depends on: the
board, the query, and the teams of the visitor when their private rows show.
Nothing that differs per visitor otherwise (log-in state, CSRF tokens, messages) is ever cached.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from celery import current_app
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.db.models import F
from django.utils.safestring import SafeString, mark_safe

from evaluators.base import environment_slugs
from submissions.export_files import ExportSpec

T = TypeVar("T")
logger = logging.getLogger(__name__)

GENERATION_KEY = "boards:generation"
#: The scope of what every board shows (scenarios, model metadata, teams): its counter is in every key.
EVERYTHING = ""
#: The scope of the home page, which shows every board: moved on with any board's.
HOME = "home"
WARM_PENDING_KEY = "boards:warm-pending"
#: The Celery task that computes the changed boards' data (``leaderboard.tasks``), sent by its name: it
#: reads the selectors, which read this module, so importing it here would close a circle.
WARM_TASK = "leaderboard.warm_boards"

#: A board as its cache is scoped: environment, flow, subset (every suite of it).
BoardRef = tuple[str, str, str]


def board_scope(env: str, flow: str, subset: str) -> str:
    return f"board:{env}/{flow}/{subset}"


def _timeout() -> int:
    return settings.MAGEBENCH_BOARD_CACHE_SECONDS


def _process_local() -> bool:
    """A cache in each process's own memory (the default, LocMem) cannot hear of another process's
    writes: a Celery worker finishing a submission. Its keys then also hold the generations kept in
    the database, one query per page; a shared cache (Redis) needs no query."""
    return isinstance(caches["default"], LocMemCache)


def _counter_key(scope: str) -> str:
    return f"{GENERATION_KEY}:{scope}" if scope else GENERATION_KEY


def _cache_generation(scope: str) -> int:
    key = _counter_key(scope)
    value = cache.get(key)
    if value is None:
        # Lost (evicted, or the cache restarted): start again from the clock, above any earlier
        # value, so that entries of older generations are never read again.
        cache.add(key, time.time_ns(), timeout=None)
        value = cache.get(key, 0)
    return int(value)


def generation(scope: str = EVERYTHING) -> tuple[int, ...]:
    """The current generation of ``scope``: the cache's counters of everything and of the scope, and
    the database's too where the cache is per process."""
    scopes = (EVERYTHING,) if scope == EVERYTHING else (EVERYTHING, scope)
    counters = tuple(_cache_generation(name) for name in scopes)
    if not _process_local():
        return counters
    from leaderboard.models import BoardsGeneration

    stored = dict(BoardsGeneration.objects.filter(scope__in=scopes).values_list("scope", "value"))
    return counters + tuple(stored.get(name, 0) for name in scopes)


def shared_generation(scope: str = EVERYTHING) -> tuple[int, ...]:
    """The generation of ``scope`` every process reads alike (what names files other processes build):
    the shared cache's counters, or the database's where the cache is each process's own (its
    counters start from each process's clock)."""
    if not _process_local():
        return generation(scope)
    from leaderboard.models import BoardsGeneration

    scopes = (EVERYTHING,) if scope == EVERYTHING else (EVERYTHING, scope)
    stored = dict(BoardsGeneration.objects.filter(scope__in=scopes).values_list("scope", "value"))
    return tuple(stored.get(name, 0) for name in scopes)


def bump_cache(scopes: tuple[str, ...]) -> None:
    for scope in scopes:
        key = _counter_key(scope)
        try:
            try:
                cache.incr(key)
            except ValueError:  # not there (any more): a new one from the clock is past every earlier one
                cache.set(key, time.time_ns(), timeout=None)
        except Exception:  # noqa: BLE001 - a cache that cannot be reached must not undo the write
            logger.warning("could not move the boards' cache generation on", exc_info=True)
            return


def bump_database(scopes: tuple[str, ...]) -> None:
    from leaderboard.models import BoardsGeneration

    for scope in scopes:
        if not BoardsGeneration.objects.filter(scope=scope).update(value=F("value") + 1):
            BoardsGeneration.objects.get_or_create(scope=scope, defaults={"value": 1})


def scopes_of(boards: tuple[BoardRef, ...]) -> tuple[str, ...]:
    if not boards:
        return (EVERYTHING,)
    return (*sorted({board_scope(*board) for board in boards}), HOME)


def warming_enabled() -> bool:
    """Whether changed boards' data is computed by a worker: only into a cache the web processes share.
    A worker filling its own memory (LocMem) would help no visitor; there the first visitor after a
    change computes it."""
    return settings.MAGEBENCH_WARM_BOARDS and _timeout() > 0


def warm_soon() -> None:
    """Send one warm of the changed boards' data a few seconds from now, unless one is already waiting:
    submissions finishing in a burst are computed for once, and the warm sees all of their changes,
    since it reads which boards changed when it runs. A broker that cannot be reached is logged and
    skipped: the write that changed the boards stands, and the first visitor renders instead."""
    if not warming_enabled():
        return
    delay = settings.MAGEBENCH_WARM_DELAY_SECONDS
    try:
        # Expires on its own, so a warm lost with its worker does not hold every later one back.
        if not cache.add(WARM_PENDING_KEY, 1, timeout=int(delay) + settings.MAGEBENCH_WARM_PENDING_SECONDS):
            return
    except Exception:  # noqa: BLE001 - no cache, nothing to warm into
        logger.warning("board cache unavailable; not warming", exc_info=True)
        return
    try:
        # retry=False: a broker that is down fails at once instead of holding the writer.
        current_app.signature(WARM_TASK).apply_async(countdown=delay, queue=settings.CELERY_TASK_DEFAULT_QUEUE,
                                                     retry=False)
    except Exception:  # noqa: BLE001 - the write is committed; its pages are rendered on demand instead
        logger.warning("could not send the boards' warm; pages are rendered on their next request", exc_info=True)
        with contextlib.suppress(Exception):  # the key expires on its own too
            cache.delete(WARM_PENDING_KEY)


def cache_key(name: str, parts: tuple[Hashable, ...], *, at: tuple[int, ...]) -> str:
    # Every page lists the registered environments: one added or removed by the setting (a restart,
    # the shared cache kept) must not be served from a page cached before.
    digest = hashlib.sha256(repr((environment_slugs(), parts)).encode()).hexdigest()[:32]
    return f"boards:{'.'.join(map(str, at))}:{name}:{digest}"


def cached(name: str, parts: tuple[Hashable, ...], compute: Callable[[], T],
           keep: Callable[[T], bool] | None = None, *, scope: str = EVERYTHING) -> T:
    """``compute()``'s value, stored under ``name`` and ``parts`` for the current generation of
    ``scope`` (a board's, ``HOME``, or ``EVERYTHING``'s alone).

    A value computed while the generation moved on is returned but not stored: it may predate the
    write that moved it. ``keep`` refuses to store a value, e.g. one for a query naming something
    that does not exist, so that made-up query strings cannot fill the cache.
    """
    timeout = _timeout()
    if timeout <= 0:
        return compute()
    try:
        at = generation(scope)
        key = cache_key(name, parts, at=at)
        hit = cache.get(key, _MISSING)
    except Exception:  # noqa: BLE001 - without its cache (Redis down) the site still serves, uncached
        logger.warning("board cache unavailable", exc_info=True)
        return compute()
    if hit is not _MISSING:
        return hit
    value = compute()
    try:
        if (keep is None or keep(value)) and generation(scope) == at:
            cache.set(key, value, timeout=timeout)
    except Exception:  # noqa: BLE001 - as above
        logger.warning("board cache unavailable", exc_info=True)
    return value


_MISSING = object()


@dataclass(frozen=True)
class CachedPage:
    """The part of a page that is the same for every visitor it is cached for: its title and the
    HTML of its content (rendered without the request, so no CSRF token or message can be in it)."""

    title: str
    content: str
    #: Whether the page loads its charts' scripts.
    charts: bool = False
    #: Whether the page may be stored (see ``cached``'s ``keep``).
    cacheable: bool = True
    #: A board page's per-attempt export (its entries on every page of its query, the board's generation
    #: then): its links, whose sizes change once the files are built, are added per request.
    export: ExportSpec | None = None
    #: The suite a board page shows (its query may leave it to the default): what its citation names.
    suite: str = ""

    @property
    def html(self) -> SafeString:
        return mark_safe(self.content)  # rendered by Django's templates, which escaped it


def page_cached(name: str, parts: tuple[Hashable, ...], build: Callable[[], CachedPage], *,
                scope: str = EVERYTHING) -> CachedPage:
    return cached(name, parts, build, keep=lambda page: page.cacheable, scope=scope)
