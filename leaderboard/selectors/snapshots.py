"""Reads of the boards' snapshots (``leaderboard.snapshots`` makes them)."""
from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.base import get_plugin
from leaderboard.models import BoardSnapshot


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
    return BoardSnapshot.objects.filter(env=env, flow=flow, subset=subset, suite=suite, version=version).first()


def snapshot_latest(env: str, flow: str, subset: str, suite: str) -> BoardSnapshot | None:
    return (BoardSnapshot.objects.filter(env=env, flow=flow, subset=subset, suite=suite)
            .order_by("-created_at", "-id").first())
