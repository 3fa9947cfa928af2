from __future__ import annotations

from typing import Any

from django.apps import AppConfig


def _boards_changed(*, boards: tuple[tuple[str, str, str], ...] = (), **kwargs: Any) -> None:
    from leaderboard.changes import boards_changed

    boards_changed(*boards)


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalogue.changes import shown_results_changed

        # The apps below send the notice; only the boards know what it drops and rebuilds.
        shown_results_changed.connect(_boards_changed, dispatch_uid="leaderboard.boards_changed")
