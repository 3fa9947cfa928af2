"""Reads of the boards' snapshots (``leaderboard.snapshots`` makes them)."""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache

from evaluators.base import get_plugin
from leaderboard.models import BoardSnapshot

#: A version as ``leaderboard.snapshots`` names them: the day, then its number that day.
VERSION = re.compile(r"\d{4}-\d{2}-\d{2}\.\d{1,6}")


@dataclass
class BoardSnapshots:
    """One board's snapshots, newest first."""

    env: str
    title: str
    flow: str
    subset: str
    suite: str
    snapshots: list[BoardSnapshot] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"{self.env}-{self.flow}-{self.subset}-{self.suite}"


def snapshots_by_board() -> list[BoardSnapshots]:
    """Every snapshot, grouped by board (in the plug-ins' order), newest first within each."""
    boards: dict[tuple[str, str, str, str], BoardSnapshots] = {}
    for snapshot in BoardSnapshot.objects.order_by("env", "flow", "subset", "suite", "-created_at", "-id"):
        key = (snapshot.env, snapshot.flow, snapshot.subset, snapshot.suite)
        if key not in boards:
            try:
                title = get_plugin(snapshot.env).title
            except KeyError:
                continue  # an environment no longer configured: its files stay, unlisted
            boards[key] = BoardSnapshots(env=snapshot.env, title=title, flow=snapshot.flow, subset=snapshot.subset,
                                         suite=snapshot.suite)
        boards[key].snapshots.append(snapshot)
    return sorted(boards.values(), key=lambda b: (get_plugin(b.env).position, b.env, b.flow, b.subset != "mini",
                                                 b.suite))


def snapshot_get(env: str, flow: str, subset: str, suite: str, version: str) -> BoardSnapshot | None:
    if not VERSION.fullmatch(version):
        return None  # nothing else was ever made (and a stray byte never reaches the database)
    return BoardSnapshot.objects.filter(env=env, flow=flow, subset=subset, suite=suite, version=version).first()


def snapshot_latest(env: str, flow: str, subset: str, suite: str) -> BoardSnapshot | None:
    return (BoardSnapshot.objects.filter(env=env, flow=flow, subset=subset, suite=suite)
            .order_by("-created_at", "-id").first())


#: A board's latest snapshot as its pages link it, kept in the cache: a cached board page is served
#: with a single query. The maker drops it; a cache of each process's own (the worker's is not the web
#: process's) shows a new snapshot once this long has passed.
LATEST_KEY = "snapshots:latest:{board}"
LATEST_SECONDS = 300


def _latest_key(env: str, flow: str, subset: str, suite: str) -> str:
    return LATEST_KEY.format(board=f"{env}/{flow}/{subset}/{suite}")


def snapshot_latest_link(env: str, flow: str, subset: str, suite: str) -> dict[str, Any] | None:
    """What a board's page links of its latest snapshot (its URL's parts), or None when it has none."""
    key = _latest_key(env, flow, subset, suite)
    with contextlib.suppress(Exception):  # no cache (Redis down): read it from the database
        found = cache.get(key)
        if found is not None:
            return found or None
    latest = snapshot_latest(env, flow, subset, suite)
    link = {"env": env, "flow": flow, "subset": subset, "suite": suite, "version": latest.version} if latest else {}
    with contextlib.suppress(Exception):
        cache.set(key, link, LATEST_SECONDS)
    return link or None


def snapshot_latest_forget(env: str, flow: str, subset: str, suite: str) -> None:
    with contextlib.suppress(Exception):
        cache.delete(_latest_key(env, flow, subset, suite))
