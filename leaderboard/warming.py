"""Rebuilding, into the board cache, what anonymous visitors see of the boards that changed.

A warm compares each board's generation (and the home page's) with the one it last rebuilt, so it
rebuilds only what changed since, however many changes came in between; the pages are built by the
views themselves, from a request with no query and no user, so that they are stored under the very
keys a visitor's request reads.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.http import HttpRequest
from django.test import RequestFactory
from django.urls import reverse

from evaluators.base import SUBSETS, all_plugins
from leaderboard.cache import HOME, WARM_PENDING_KEY, BoardRef, board_scope, generation

logger = logging.getLogger(__name__)

WARMED_KEY = "boards:warmed:{scope}"


@dataclass
class Warmed:
    """What one warm rebuilt: the boards, whether the home page, and the pages that failed."""

    boards: list[BoardRef] = field(default_factory=list)
    home: bool = False
    failed: list[str] = field(default_factory=list)


def every_board() -> list[BoardRef]:
    return [(plugin.slug, flow, subset) for plugin in all_plugins() for flow in plugin.flows
            for subset in SUBSETS]


def _anonymous(path: str, query: dict[str, str] | None = None) -> HttpRequest:
    request = RequestFactory().get(path, query or {})
    request.user = AnonymousUser()
    return request


def _build(name: str, render: Callable[[], object], warmed: Warmed) -> None:
    try:
        render()
    except Exception:  # noqa: BLE001 - one page failing must not keep the others cold
        logger.warning("could not warm %s", name, exc_info=True)
        warmed.failed.append(name)


def warm_board(env: str, flow: str, subset: str, warmed: Warmed) -> None:
    """The board's page, API answer, CSV export, analysis, comparison, all-pairs and cost pages, with default
    filters, and the builds of its frame-free attempt exports sent."""
    from leaderboard.analysis_views import board_analysis, board_compare, board_pairs
    from leaderboard.apis import board_payload
    from leaderboard.attempt_exports import board_exports_warm, payload_entries
    from leaderboard.cost_views import board_cost
    from leaderboard.views import board, board_export

    args = (env, flow, subset)
    _build(f"board {args}", lambda: board(_anonymous(reverse("board", args=args)), *args), warmed)
    _build(f"api {args}", lambda: board_payload(_anonymous(reverse("api-board", args=args)), *args), warmed)
    # The attempt exports are built by workers of their own (a board of 60,000 attempts takes minutes),
    # so that a visitor's download is usually ready; the board's older files go.
    _build(f"attempt exports {args}", lambda: board_exports_warm(args, payload_entries(board_payload(
        _anonymous(reverse("api-board", args=args)), *args))), warmed)
    _build(f"csv {args}", lambda: board_export(
        _anonymous(reverse("board-export", args=[*args, "csv"])), *args, fmt="csv"), warmed)
    _build(f"analysis {args}", lambda: board_analysis(
        _anonymous(reverse("board-analysis", args=args)), *args), warmed)
    _build(f"compare {args}", lambda: board_compare(_anonymous(reverse("board-compare", args=args)), *args), warmed)
    _build(f"pairs {args}", lambda: board_pairs(_anonymous(reverse("board-pairs", args=args)), *args), warmed)
    _build(f"cost {args}", lambda: board_cost(_anonymous(reverse("board-cost", args=args)), *args), warmed)


def warm_home(warmed: Warmed) -> None:
    from leaderboard.views import home

    for overview in SUBSETS:
        request = _anonymous(reverse("home"), {"overview": overview})
        _build(f"home {overview}", partial(home, request), warmed)


def _stale(scope: str) -> tuple[bool, tuple[int, ...]]:
    """Whether ``scope`` changed since it was last warmed, and its generation now."""
    now = generation(scope)
    return cache.get(WARMED_KEY.format(scope=scope)) != now, now


def warm_boards(*, everything: bool = False) -> Warmed:
    """Rebuild the pages of every board changed since its last warm, and the home page if any did
    (``everything``: all of them). A page built while its board changed again is not stored
    (``leaderboard.cache.cached``); that change sends a warm of its own."""
    # Cleared first: a change from here on sends another warm rather than waiting on this one.
    cache.delete(WARM_PENDING_KEY)
    warmed = Warmed()
    for env, flow, subset in every_board():
        scope = board_scope(env, flow, subset)
        stale, now = _stale(scope)
        if stale or everything:
            warm_board(env, flow, subset, warmed)
            warmed.boards.append((env, flow, subset))
            cache.set(WARMED_KEY.format(scope=scope), now, timeout=None)
    stale, now = _stale(HOME)
    if stale or everything:
        warm_home(warmed)
        warmed.home = True
        cache.set(WARMED_KEY.format(scope=HOME), now, timeout=None)
    return warmed
