"""Celery tasks of the boards."""
from __future__ import annotations

from celery import shared_task

from leaderboard.cache import WARM_TASK
from leaderboard.warming import warm_boards as rebuild_changed


@shared_task(name=WARM_TASK)
def warm_boards() -> dict[str, object]:
    """Compute into the shared cache the data anonymous visitors' pages read of the boards that changed."""
    warmed = rebuild_changed()
    return {"boards": ["/".join(board) for board in warmed.boards], "home": warmed.home, "failed": warmed.failed}


@shared_task(name="leaderboard.snapshot_boards")
def snapshot_boards() -> list[str]:
    """A dated snapshot of every public board whose content changed since its latest one (beat sends
    it once a day: ``MAGEBENCH_SNAPSHOT_EVERY_SECONDS``)."""
    from leaderboard.snapshots import boards_snapshot

    return [f"{snapshot.board_name} {snapshot.version}" for snapshot in boards_snapshot()]
