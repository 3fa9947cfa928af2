"""Snapshots of the boards the platform really played (site_pages.play_site: Sokoban, WebUI with its
lost-score parts, Football): every environment's release loads with pandas and ``datasets`` with the
card's columns, and the command makes one per board that has rows."""
from __future__ import annotations

import pandas
import pytest
import yaml
from django.core.management import call_command

from evaluators.base import get_plugin
from leaderboard.columns import board_columns
from leaderboard.models import BoardSnapshot
from leaderboard.snapshots import snapshot_folder

pytestmark = pytest.mark.integration


def test_every_played_board_gets_a_snapshot_whose_files_have_the_cards_columns(played_site, settings, tmp_path):
    import datasets

    settings.MAGEBENCH_SNAPSHOT_ROOT = tmp_path / "snapshots"
    call_command("snapshot_boards", verbosity=0)
    made = {(s.env, s.flow): s for s in BoardSnapshot.objects.all()}
    assert sorted(made) == [("football", "online"), ("sokoban", "online"), ("webui", "global")]
    for (env, _), snapshot in made.items():
        folder = snapshot_folder(snapshot)
        header = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n")[1])
        features = next(i["features"] for i in header["dataset_info"] if i["config_name"] == "board")
        names = [c.name for c in board_columns(get_plugin(env))]
        assert [f["name"] for f in features] == names
        assert list(pandas.read_parquet(folder / "data/board.parquet").columns) == names
        board = datasets.load_dataset("parquet", data_files=str(folder / "data/board.parquet"))["train"]
        attempts = datasets.load_dataset("parquet", data_files=str(folder / "data/attempts.parquet"))["train"]
        assert list(board.features) == names and board.num_rows == snapshot.entries
        assert attempts.num_rows == snapshot.attempts > 0
    # WebUI breaks its lost score down: its board's release carries those columns, filled.
    webui = pandas.read_parquet(snapshot_folder(made[("webui", "global")]) / "data/board.parquet")
    lost = [f"lost_{key}_pct" for key in get_plugin("webui").breakdown_keys]
    assert lost and webui[lost].notna().all().all()
