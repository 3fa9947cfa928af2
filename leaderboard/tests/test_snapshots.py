"""Dated snapshots of a board: loaded with pandas and ``datasets`` as the card describes them, a new
version only when the board changed, and never a byte of an older one changed."""
from __future__ import annotations

import hashlib
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

from accounts.models import Team
from evaluators.base import get_plugin
from leaderboard.columns import ATTEMPT_COLUMNS, board_columns
from leaderboard.models import BoardSnapshot
from leaderboard.snapshots import BoardRef, board_snapshot_make, snapshot_folder
from leaderboard.tasks import snapshot_boards
from leaderboard.tests.board_entries import board_entries, finished_entry
from submissions.models import ModelEntry

BOARD = BoardRef("sokoban", "global", "mini", "fixture")
MADE = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)
#: How pandas reads each of the card's types.
PANDAS = {"string": {"object", "str", "string"}, "int64": {"Int64"}, "float64": {"float64"}, "bool": {"bool"},
          "timestamp[us, tz=UTC]": {"datetime64[us, UTC]"}}


@pytest.fixture
def snapshot_root(settings, tmp_path) -> Path:
    settings.MAGEBENCH_SNAPSHOT_ROOT = tmp_path / "snapshots"
    return settings.MAGEBENCH_SNAPSHOT_ROOT


@pytest.fixture
def entries(fixture_scenarios, snapshot_root):
    return board_entries(Team.objects.create(name="Lab", slug="lab"))


def _card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    return yaml.safe_load(header), body


def _features(card: dict, config: str) -> dict[str, str]:
    info = next(item for item in card["dataset_info"] if item["config_name"] == config)
    return {f["name"]: f.get("dtype") or f"list<{f['sequence']}>" for f in info["features"]}


def test_a_snapshot_of_a_board_loads_with_datasets_and_pandas_with_the_cards_columns_and_types(entries, tmp_path):
    import datasets
    import pandas

    snapshot = board_snapshot_make(BOARD, now=MADE)
    assert snapshot is not None and snapshot.version == "2026-11-29.1"
    # Public entries only: Vision-7B (60 on 10 scenarios), Tiny (50), Partial (90 on 2); not the private
    # Online entry nor the hidden one. 10 + 10 + 2 attempts.
    assert (snapshot.entries, snapshot.attempts, snapshot.scenarios) == (3, 22, 10)
    folder = snapshot_folder(snapshot)
    card, body = _card(folder)
    assert card["license"] == "cc-by-4.0" and "2026-11-29.1" in card["pretty_name"]
    assert [c["config_name"] for c in card["configs"]] == ["board", "attempts"]
    assert card["configs"][0]["data_files"] == [{"split": "train", "path": "data/board.parquet"}]

    board_types = _features(card, "board")
    assert list(board_types) == [c.name for c in board_columns(get_plugin("sokoban"))]
    frame = pandas.read_parquet(folder / "data/board.parquet")
    assert list(frame.columns) == list(board_types)
    for name, kind in board_types.items():
        if kind != "list<string>":
            assert str(frame[name].dtype) in PANDAS[kind], (name, kind, frame[name].dtype)
    assert list(frame["model"]) == ["Vision-7B", "Tiny", "Partial"]
    assert list(frame["mean"]) == [60.0, 50.0, 90.0]
    assert list(frame["rank"].astype(object).where(frame["rank"].notna(), None)) == [1, 2, None]
    assert list(frame["note"]) == ["", "", ""]  # an empty text column stays text
    assert list(frame["variant"].map(list)) == [[], [], []]

    loaded = datasets.load_dataset("parquet", data_files=str(folder / "data/board.parquet"))["train"]
    assert {name: str(feature.dtype) if hasattr(feature, "dtype") else "list<string>"
            for name, feature in loaded.features.items()} == board_types
    assert loaded["rank"] == [1, 2, None] and loaded["note"] == ["", "", ""]

    attempt_types = _features(card, "attempts")
    assert list(attempt_types) == [c.name for c in ATTEMPT_COLUMNS]
    attempts = datasets.load_dataset("parquet", data_files=str(folder / "data/attempts.parquet"))["train"]
    assert {name: str(feature.dtype) for name, feature in attempts.features.items()} == attempt_types
    assert attempts.num_rows == 22 and attempts["error_message"] == [""] * 22
    attempt_frame = pandas.read_parquet(folder / "data/attempts.parquet")
    assert sorted(set(attempt_frame["model"])) == ["Partial", "Tiny", "Vision-7B"]
    # Integer columns stay integers in pandas too, empty cells and all (not float64).
    for name, kind in attempt_types.items():
        assert str(attempt_frame[name].dtype) in PANDAS[kind], (name, kind, attempt_frame[name].dtype)
    # The body documents every column with its type, and says to read Parquet.
    for column in (*board_columns(get_plugin("sokoban")), *ATTEMPT_COLUMNS):
        assert f"| `{column.name}` | {column.type} |" in body
    assert "Read the Parquet files, not CSV" in body and "@misc{" in body and "sha256" in body
    with zipfile.ZipFile(folder / f"magebench-sokoban-global-mini-fixture-{snapshot.version}.zip") as archive:
        assert sorted(archive.namelist()) == ["README.md", "data/attempts.parquet", "data/board.parquet"]
        assert archive.read("data/board.parquet") == (folder / "data/board.parquet").read_bytes()
        archive.extractall(tmp_path / "unzipped")
    # The card's header names both tables: the unzipped folder loads by config name.
    assert datasets.load_dataset(str(tmp_path / "unzipped"), "attempts")["train"].num_rows == 22
    assert datasets.load_dataset(str(tmp_path / "unzipped"))["train"]["model"] == ["Vision-7B", "Tiny", "Partial"]


def test_an_unchanged_board_makes_no_new_version_and_a_changed_one_a_new_hash_leaving_the_old_bytes(entries):
    first = board_snapshot_make(BOARD, now=MADE)
    assert first is not None
    folder = snapshot_folder(first)
    before = {path.relative_to(folder): path.read_bytes() for path in folder.rglob("*") if path.is_file()}

    assert board_snapshot_make(BOARD, now=MADE.replace(hour=10)) is None
    assert BoardSnapshot.objects.count() == 1

    newcomer = ModelEntry.objects.create(team=entries.lab, name="Newcomer")
    finished_entry(entries.lab, newcomer, [70.0] * 10)
    second = board_snapshot_make(BOARD, now=MADE.replace(hour=11))
    assert second is not None
    assert second.version == "2026-11-29.2" and second.content_hash != first.content_hash
    assert (second.entries, second.attempts) == (4, 32)
    after = {path.relative_to(folder): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    assert after == before
    for entry in first.files:
        assert hashlib.sha256(before[Path(entry["name"])]).hexdigest() == entry["sha256"]
    assert not (folder / "README.md").stat().st_mode & 0o222  # written once, then read-only


def test_a_snapshot_row_is_never_changed(entries):
    snapshot = board_snapshot_make(BOARD, now=MADE)
    assert snapshot is not None
    snapshot.content_hash = "0" * 64
    with pytest.raises(TypeError):
        snapshot.save()
    with pytest.raises(TypeError):
        BoardSnapshot.objects.filter(id=snapshot.id).update(version="x")
    assert BoardSnapshot.objects.get().content_hash != "0" * 64


def test_the_command_and_the_daily_task_snapshot_every_board_with_rows_once(entries):
    call_command("snapshot_boards", verbosity=0)
    # Only the Sokoban Global mini board has public rows (the Online entry is private).
    assert list(BoardSnapshot.objects.values_list("env", "flow", "subset", "suite")) == [
        ("sokoban", "global", "mini", "fixture")]
    call_command("snapshot_boards", verbosity=0)
    assert snapshot_boards.apply().get() == []
    assert BoardSnapshot.objects.count() == 1
    newcomer = ModelEntry.objects.create(team=entries.lab, name="Newcomer")
    finished_entry(entries.lab, newcomer, [70.0] * 10)
    made = snapshot_boards.apply().get()
    assert len(made) == 1 and made[0].startswith("sokoban-global-mini-fixture ")


def test_the_board_links_its_latest_snapshot_and_the_pages_and_api_serve_it(client, entries):
    board_url = reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture"
    assert "none of this board yet" in client.get(board_url).content.decode()
    snapshot = board_snapshot_make(BOARD, now=MADE)
    assert snapshot is not None
    args = ["sokoban", "global", "mini", "fixture", snapshot.version]
    page = client.get(board_url).content.decode()
    assert f'href="{reverse("data-snapshot", args=args)}">citable snapshot 2026-11-29.1' in page

    detail = client.get(reverse("data-snapshot", args=args)).content.decode()
    board_file = f"http://testserver{reverse('data-snapshot-file', args=[*args, 'data/board.parquet'])}"
    assert f'pd.read_parquet(&quot;{board_file}&quot;)' in detail
    assert f'datasets.load_dataset(&quot;parquet&quot;, data_files=&quot;{board_file}&quot;)' in detail
    assert snapshot.content_hash in detail
    index = client.get(reverse("data-snapshots")).content.decode()
    assert snapshot.version in index and snapshot.content_hash[:14] in index

    download = client.get(board_file)
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == (snapshot_folder(snapshot) / "data/board.parquet").read_bytes()
    assert client.get(reverse("data-snapshot-file", args=[*args, "../../etc/passwd"])).status_code == 404

    listed = client.get(reverse("api-snapshots") + "?env=sokoban").json()
    assert [(s["version"], s["content_hash"], s["entries"]) for s in listed] == [
        (snapshot.version, snapshot.content_hash, 3)]
    one = client.get(reverse("api-snapshot", args=args)).json()
    assert [f["name"] for f in one["files"]] == ["README.md", "data/board.parquet", "data/attempts.parquet",
                                                 "magebench-sokoban-global-mini-fixture-2026-11-29.1.zip"]
    assert one["bibtex"].startswith("@misc{") and client.get(reverse("api-snapshot", args=[
        *args[:4], "2020-01-01.1"])).status_code == 404
