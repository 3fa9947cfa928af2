"""The paper's own results (Tables 1, 2 and 4) become reported rows on the official suite's boards:
``import_paper_results`` reads them from a JSON file in the form of fixtures/paper-results.json,
imports again without duplicating, and the boards show them marked as reported, never ranked."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from catalogue.models import ReportedResult
from catalogue.paper_results import PAPER_URL
from catalogue.services import environment_ensure
from leaderboard.selectors import BoardFilter, board_get

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "paper-results.json"


def _paper(**changes: float) -> dict:
    """A small file in the paper's form: two models, a null cell, Table 2's IA/RA for one of them."""
    mini = {"GPT-4o": {"WebUI_Global": 34.28, "Sokoban_Global": 46.09, "Sokoban_Online": None,
                       "Football_Online": 21.2},
            "Idle Baseline": {"Sokoban_Global": 41.18}}
    mini["GPT-4o"].update(changes)
    return {
        "about": "test copy",
        "table1_mini": {"source": "MageBench paper Table 1 (mini set; Sokoban/WebUI 3 repeats, Football 10)",
                        "rows": mini},
        "table4_full": {"source": "MageBench appendix Table 4 (full set, 3 repeats; delta: WebUI 0.8, Sokoban G 0.5, "
                                  "O 0.4, Football 2.0)",
                        "rows": {"GPT-4o": {"WebUI_Global": 40.0, "Sokoban_Global": 47.0, "Sokoban_Online": 48.5,
                                            "Football_Online": None}}},
        "table2_ia_ra": {"source": "MageBench paper Table 2", "rows": {"GPT-4o": [0.0, 5.0, 0.0, 6.7, 0.0, 7.5]}},
    }


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "paper-results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _import(path: Path) -> str:
    out = StringIO()
    call_command("import_paper_results", str(path), stdout=out)
    return out.getvalue()


@pytest.fixture
def environments():
    for slug in ("webui", "sokoban", "football"):
        environment_ensure(slug)


def _rows() -> dict[tuple[str, str, str, str], ReportedResult]:
    return {(r.environment_id, r.flow, r.subset, r.model_name): r for r in ReportedResult.objects.all()}


def test_the_command_imports_each_reported_cell_with_its_protocol_and_skips_null_cells(tmp_path, environments):
    report = _import(_write(tmp_path, _paper()))
    assert "7 created, 0 updated, 0 unchanged" in report
    rows = _rows()
    assert set(rows) == {
        ("webui", "global", "mini", "GPT-4o"), ("sokoban", "global", "mini", "GPT-4o"),
        ("football", "online", "mini", "GPT-4o"), ("sokoban", "global", "mini", "Idle Baseline"),
        ("webui", "global", "full", "GPT-4o"), ("sokoban", "global", "full", "GPT-4o"),
        ("sokoban", "online", "full", "GPT-4o")}
    sokoban = rows[("sokoban", "global", "mini", "GPT-4o")]
    assert (sokoban.score, sokoban.repeats, sokoban.uncertainty, sokoban.ia_pct, sokoban.ra_pct) == (
        46.09, 3, None, 0.0, 5.0)
    football = rows[("football", "online", "mini", "GPT-4o")]
    assert (football.repeats, football.ia_pct, football.ra_pct) == (10, 0.0, 7.5)
    assert rows[("webui", "global", "mini", "GPT-4o")].ia_pct is None  # Table 2 has no WebUI columns
    full = rows[("sokoban", "online", "full", "GPT-4o")]
    assert (full.score, full.repeats, full.uncertainty) == (48.5, 3, 0.4)
    assert rows[("webui", "global", "full", "GPT-4o")].uncertainty == 0.8
    assert all(r.source == PAPER_URL and r.note.startswith("reported in the paper, not evaluated here")
               for r in rows.values())


def test_importing_again_updates_the_rows_and_never_duplicates_them(tmp_path, environments):
    path = _write(tmp_path, _paper())
    _import(path)
    ids = {key: row.id for key, row in _rows().items()}
    assert "0 created, 0 updated, 7 unchanged" in _import(path)
    assert "0 created, 1 updated, 6 unchanged" in _import(_write(tmp_path, _paper(Sokoban_Global=46.5)))
    after = _rows()
    assert {key: row.id for key, row in after.items()} == ids
    assert after[("sokoban", "global", "mini", "GPT-4o")].score == 46.5
    assert ReportedResult.objects.count() == 7


def test_a_file_not_in_the_papers_form_is_refused_with_where_it_went_wrong(tmp_path, environments):
    with pytest.raises(CommandError, match="no 'table4_full' object"):
        _import(_write(tmp_path, {"table1_mini": {"rows": {}}}))
    broken = _paper()
    broken["table1_mini"]["rows"]["GPT-4o"]["WebUI_Global"] = "34.28"
    with pytest.raises(CommandError, match="'GPT-4o' WebUI_Global: '34.28' is not a number"):
        _import(_write(tmp_path, broken))
    with pytest.raises(CommandError, match="cannot read"):
        _import(tmp_path / "missing.json")
    assert not ReportedResult.objects.exists()


def test_the_shipped_copy_of_the_papers_tables_imports_every_reported_cell(environments):
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    cells = sum(value is not None for key in ("table1_mini", "table4_full")
                for row in data[key]["rows"].values() for value in row.values())
    assert f"{cells} created" in _import(FIXTURE)
    gpt = _rows()[("sokoban", "online", "mini", "GPT-4o")]
    assert (gpt.score, gpt.ia_pct, gpt.ra_pct) == (53.03, 0.0, 6.7)


def test_an_official_board_shows_the_papers_rows_as_reported_and_unranked(tmp_path, environments, client):
    url = reverse("board", args=["sokoban", "global", "mini"])
    before = client.get(url, {"suite": "official"}).content.decode()  # cached until the import says otherwise
    assert "GPT-4o" not in before
    _import(_write(tmp_path, _paper()))
    page = client.get(url, {"suite": "official"}).content.decode()
    assert "GPT-4o" in page and "reported in the paper, not evaluated here (Table 1, mini set)" in page
    assert f'href="{PAPER_URL}"' in page
    board = board_get(env="sokoban", flow="global", subset="mini", suite="official")
    reported = {row.model: row for row in board.rows if row.is_reported}
    assert set(reported) == {"GPT-4o", "Idle Baseline"}
    assert all(row.rank is None and row.rank_low is None for row in reported.values())
    # The fixture suite's boards never show published numbers.
    fixture = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert not any(row.is_reported for row in fixture.rows)
    # Ranked only when a visitor asks for it.
    ranked = board_get(env="sokoban", flow="global", subset="mini", suite="official",
                       filters=BoardFilter(rank_reported=True))
    assert [(row.model, row.rank) for row in ranked.rows] == [("GPT-4o", 1), ("Idle Baseline", 2)]


def test_a_board_offers_the_official_suite_once_the_papers_rows_are_in_even_before_an_official_import(
        tmp_path, environments, client, fixture_scenarios):
    url = reverse("board", args=["sokoban", "online", "mini"])
    assert 'href="?suite=official"' not in client.get(url).content.decode()
    _import(_write(tmp_path, _paper()))
    page = client.get(url).content.decode()
    assert 'href="?suite=fixture"' in page and 'href="?suite=official"' in page
    assert "GPT-4o" not in page  # the default suite is still the fixtures: no published numbers there
    assert "GPT-4o" not in client.get(reverse("board", args=["webui", "online", "mini"])).content.decode()


@pytest.mark.django_db
def test_the_analysis_and_compare_pages_of_a_board_of_reported_rows_answer_and_name_them_as_reported(
        client, fixture_scenarios):
    call_command("import_paper_results", stdout=StringIO())
    for name in ("board-analysis", "board-compare"):
        response = client.get(reverse(name, args=["sokoban", "global", "mini"]), {"suite": "official"})
        assert response.status_code == 200, (name, response.status_code)
    analysis = client.get(reverse("board-analysis", args=["sokoban", "global", "mini"]), {"suite": "official"})
    assert "reported</span>" in analysis.content.decode()


def test_the_compare_page_offers_no_reported_row_to_pair_and_points_to_what_the_paper_gives(client, fixture_scenarios):
    call_command("import_paper_results", stdout=StringIO())
    response = client.get(reverse("board-compare", args=["sokoban", "global", "mini"]), {"suite": "official"})
    text = response.content.decode()
    assert response.status_code == 200
    # No option with no submission behind it ("None"), and the reported rows are named for what they are.
    assert '<option value="None"' not in text and "<select" not in text
    assert "reported rows are published totals, with no per-scenario scores to pair" in text
    assert "#reported" in text


def test_each_columns_environment_and_protocol_come_from_the_loaded_plugins_and_other_columns_are_skipped(
        settings, tmp_path, environments):
    from catalogue.paper_results import paper_results_read

    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.sokoban"]
    results = paper_results_read(_paper())
    claimed = {(r.env, r.flow, r.subset, r.model): (r.repeats, r.uncertainty, r.ia_pct, r.ra_pct)
               for r in results if r.env}
    assert claimed == {
        ("sokoban", "global", "mini", "GPT-4o"): (3, None, 0.0, 5.0),
        ("sokoban", "global", "mini", "Idle Baseline"): (3, None, None, None),
        ("sokoban", "global", "full", "GPT-4o"): (3, 0.5, None, None),
        ("sokoban", "online", "full", "GPT-4o"): (3, 0.4, None, None)}
    # WebUI mini and full, Football mini: read, claimed by none, and not imported.
    assert sum(not r.env for r in results) == 3
    assert "4 created, 0 updated, 0 unchanged, 3 skipped" in _import(_write(tmp_path, _paper()))
