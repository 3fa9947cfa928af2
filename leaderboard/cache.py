"""Cached reads of what finished submissions make immutable: boards, their exports, the home page's
overview and the analysis pages.

Every entry's key holds the current *generation*, a counter kept in the cache itself (and in the
database too when the cache is each process's own); any write that changes what a board shows calls
:func:`boards_changed`, which moves the counter on, so every entry written before it is never read
again (and expires on its own). Keys also hold everything the
entry depends on: the board, the query, and the teams of the visitor when their private rows show.
Nothing that differs per visitor otherwise (log-in state, CSRF tokens, messages) is ever cached.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.db import transaction
from django.db.models import F
from django.utils.safestring import SafeString, mark_safe

T = TypeVar("T")
logger = logging.getLogger(__name__)

GENERATION_KEY = "boards:generation"


def _timeout() -> int:
    return settings.MAGEBENCH_BOARD_CACHE_SECONDS


def _process_local() -> bool:
    """A cache in each process's own memory (the default, LocMem) cannot hear of another process's
    writes: a Celery worker finishing a submission. Its keys then also hold the generation kept in
    the database, one query per page; a shared cache (Redis) needs no query."""
    return isinstance(caches["default"], LocMemCache)


def _cache_generation() -> int:
    value = cache.get(GENERATION_KEY)
    if value is None:
        # Lost (evicted, or the cache restarted): start again from the clock, above any earlier
        # value, so that entries of older generations are never read again.
        cache.add(GENERATION_KEY, time.time_ns(), timeout=None)
        value = cache.get(GENERATION_KEY, 0)
    return int(value)


def generation() -> tuple[int, int]:
    """The current generation: the cache's counter, and the database's where the cache is per process."""
    stored = 0
    if _process_local():
        from leaderboard.models import BoardsGeneration

        stored = BoardsGeneration.objects.values_list("value", flat=True).order_by("id").first() or 0
    return _cache_generation(), stored


def _bump_cache() -> None:
    try:
        try:
            cache.incr(GENERATION_KEY)
        except ValueError:  # not there (any more): a new one from the clock is past every earlier one
            cache.set(GENERATION_KEY, time.time_ns(), timeout=None)
    except Exception:  # noqa: BLE001 - a cache that cannot be reached must not undo the write
        logger.warning("could not move the boards' cache generation on", exc_info=True)


def _bump_database() -> None:
    from leaderboard.models import BoardsGeneration

    if not BoardsGeneration.objects.filter(id=1).update(value=F("value") + 1):
        BoardsGeneration.objects.get_or_create(id=1, defaults={"value": 1})


def boards_changed() -> None:
    """Call after any write that changes a board.

    The cache's counter moves on now, so that the writer, and anyone reading inside its transaction,
    sees the change; both counters move on once the transaction commits, so that a page another
    process built from the data before the commit is dropped too. The database's counter moves only
    then, in a statement of its own: a lock on it held to the end of every writer's transaction
    would queue the workers finishing submissions behind one another.
    """
    _bump_cache()

    def committed() -> None:
        _bump_cache()
        _bump_database()

    # robust: the write is committed whatever happens to the counters.
    transaction.on_commit(committed, robust=True)


def cache_key(name: str, parts: tuple[Hashable, ...], *, at: tuple[int, int]) -> str:
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
    return f"boards:{at[0]}.{at[1]}:{name}:{digest}"


def cached(name: str, parts: tuple[Hashable, ...], compute: Callable[[], T],
           keep: Callable[[T], bool] | None = None) -> T:
    """``compute()``'s value, stored under ``name`` and ``parts`` for the current generation.

    A value computed while the generation moved on is returned but not stored: it may predate the
    write that moved it. ``keep`` refuses to store a value, e.g. one for a query naming something
    that does not exist, so that made-up query strings cannot fill the cache.
    """
    timeout = _timeout()
    if timeout <= 0:
        return compute()
    try:
        at = generation()
        key = cache_key(name, parts, at=at)
        hit = cache.get(key, _MISSING)
    except Exception:  # noqa: BLE001 - without its cache (Redis down) the site still serves, uncached
        logger.warning("board cache unavailable", exc_info=True)
        return compute()
    if hit is not _MISSING:
        return hit
    value = compute()
    try:
        if (keep is None or keep(value)) and generation() == at:
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

    @property
    def html(self) -> SafeString:
        return mark_safe(self.content)  # rendered by Django's templates, which escaped it


def page_cached(name: str, parts: tuple[Hashable, ...], build: Callable[[], CachedPage]) -> CachedPage:
    return cached(name, parts, build, keep=lambda page: page.cacheable)
