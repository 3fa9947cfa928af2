from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from leaderboard.snapshots import BoardRef, boards_snapshot, public_boards


class Command(BaseCommand):
    help = ("Make a dated, immutable snapshot (Parquet, dataset card, zip) of every public board whose content "
            "differs from its latest snapshot; a board with no rows, or unchanged, gets none. Beat runs the same "
            "once a day (the task leaderboard.snapshot_boards).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--env", help="only this environment's boards")
        parser.add_argument("--suite", help="only this suite's boards")

    def handle(self, *args: Any, env: str | None, suite: str | None, **options: Any) -> None:
        refs: list[BoardRef] = [ref for ref in public_boards()
                                if (env is None or ref.env == env) and (suite is None or ref.suite == suite)]
        if not refs:
            raise CommandError("no public board matches")
        made = boards_snapshot(refs)
        if options["verbosity"] < 1:
            return
        for snapshot in made:
            self.stdout.write(f"{snapshot.board_name} {snapshot.version}: {snapshot.entries} entries, "
                              f"{snapshot.attempts} attempts, sha256 {snapshot.content_hash}")
        self.stdout.write(f"{len(made)} new snapshot(s) of {len(refs)} board(s); the others were empty or unchanged")
