"""A board's matrix of all pairs, on a hand-made board of 3 entries × 4 scenarios with hand-computed
differences, p-values and win rates; its cap; its page and its API."""
from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse

from catalogue.models import Scenario
from leaderboard import pairs as pairs_module
from leaderboard.pairs import BoardPairs, PairCell, board_pairs_get
from leaderboard.tests.test_board_analysis import SUITE, scenario, scored, submission
from scoring.pairs import means_matrix, pair_matrix
from scoring.stats import paired_test
from submissions.models import Attempt, Submission
from submissions.services import submission_result_rebuild

pytestmark = pytest.mark.django_db


def two_sided_p_df3(t: float) -> float:
    """The two-sided p-value of Student's t with 3 degrees of freedom, in closed form:
    P(|T| > t) = 1 − (2/π)·(atan(t/√3) + (t/√3)/(1 + t²/3))."""
    x = abs(t) / math.sqrt(3)
    return 1 - (2 / math.pi) * (math.atan(x) + x / (1 + x * x))


@pytest.fixture
def three_entries() -> dict[str, Submission]:
    """Scenarios s1–s4, per-scenario means: Orca 80, 60, 50 (repeats 40 and 60), 90 (a board mean of
    66 over its five scores); Lynx 100, 55, 45, 85 (71.25: first on the board); Idle agent, a
    baseline, 20, 30, 10, 40."""
    s = [scenario("sokoban", f"{i}-Sokoban-small-v0") for i in range(1, 5)]
    orca, lynx = submission("sokoban", "Orca"), submission("sokoban", "Lynx")
    idle = submission("sokoban", "Idle agent", baseline=True)
    for sub, scores in ((orca, [(80.0,), (60.0,), (40.0, 60.0), (90.0,)]),
                        (lynx, [(100.0,), (55.0,), (45.0,), (85.0,)]),
                        (idle, [(20.0,), (30.0,), (10.0,), (40.0,)])):
        for sc, repeats in zip(s, scores, strict=True):
            scored(sub, sc, *repeats)
    # One of them read from its stored result, the others summarised from their attempts.
    submission_result_rebuild(submission_id=lynx.id)
    return {"orca": orca, "lynx": lynx, "idle": idle}


def cells_by_label(pairs: BoardPairs) -> dict[tuple[str, str], PairCell]:
    return {(cell.a.label, cell.b.label): cell for row in pairs.rows for cell in row.cells if cell is not None}


def test_every_pair_has_its_hand_computed_difference_p_value_and_win_rate(three_entries):
    pairs = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE)
    assert [row.model.label for row in pairs.rows] == ["Lynx", "Orca", "Idle agent"]  # the board's order
    assert [m.label for m in pairs.columns] == ["Lynx", "Orca", "Idle agent"]
    assert [row.rank for row in pairs.rows] == [1, 2, None]
    assert all(row.cells[index] is None for index, row in enumerate(pairs.rows))  # the diagonal
    cells = cells_by_label(pairs)

    # Lynx − Orca: 20, −5, −5, −5 → mean 1.25; deviations 18.75, −6.25 ×3 → SS 468.75, var 156.25,
    # sd 12.5, se 6.25, t 0.2. Lynx is ahead on 1 of 4 scenarios.
    lynx_orca = cells[("Lynx", "Orca")]
    assert lynx_orca.n_shared == 4
    assert lynx_orca.mean_difference == pytest.approx(1.25)
    assert lynx_orca.p_value == pytest.approx(two_sided_p_df3(0.2))
    assert not lynx_orca.significant and lynx_orca.tone == "ahead"
    assert lynx_orca.win_rate == pytest.approx(0.25)
    orca_lynx = cells[("Orca", "Lynx")]
    assert orca_lynx.mean_difference == pytest.approx(-1.25) and orca_lynx.win_rate == pytest.approx(0.75)
    assert orca_lynx.p_value == pytest.approx(lynx_orca.p_value) and orca_lynx.tone == "behind"

    # Orca − Idle: 60, 30, 40, 50 → mean 45, SS 500, var 500/3, se √(500/12), t = 45/√(500/12).
    orca_idle = cells[("Orca", "Idle agent")]
    assert orca_idle.mean_difference == pytest.approx(45.0)
    assert orca_idle.p_value == pytest.approx(two_sided_p_df3(45 / math.sqrt(500 / 12)))
    assert orca_idle.p_value < 0.05 and orca_idle.significant and orca_idle.tone == "ahead sig"
    assert orca_idle.win_rate == 1.0
    # Lynx − Idle: 80, 25, 35, 45 → mean 46.25, SS 1718.75, var 1718.75/3, t = 46.25/√(1718.75/12).
    lynx_idle = cells[("Lynx", "Idle agent")]
    assert lynx_idle.mean_difference == pytest.approx(46.25)
    assert lynx_idle.p_value == pytest.approx(two_sided_p_df3(46.25 / math.sqrt(1718.75 / 12)))
    assert lynx_idle.significant and cells[("Idle agent", "Lynx")].tone == "behind sig"
    assert cells[("Idle agent", "Lynx")].win_rate == 0.0

    # Mean win rates: Lynx (0.25 + 1) / 2, Orca (0.75 + 1) / 2, Idle 0.
    assert [row.mean_win_rate for row in pairs.rows] == [pytest.approx(0.625), pytest.approx(0.875), 0.0]


def test_a_pair_says_what_the_compare_pages_paired_test_says(three_entries):
    pairs = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE)
    scenarios = {s.key: s.id for s in Scenario.objects.filter(suite=SUITE)}
    lynx = {scenarios[f"{i}-Sokoban-small-v0"]: v for i, v in enumerate([100.0, 55.0, 45.0, 85.0], start=1)}
    idle = {scenarios[f"{i}-Sokoban-small-v0"]: v for i, v in enumerate([20.0, 30.0, 10.0, 40.0], start=1)}
    test = paired_test(lynx, idle)
    cell = cells_by_label(pairs)[("Lynx", "Idle agent")]
    assert (cell.n_shared, cell.mean_difference) == (test.n_shared, pytest.approx(test.mean_difference))
    assert cell.p_value == pytest.approx(test.p_value, rel=1e-12)


def test_the_matrix_matches_the_paired_test_on_gaps_ties_and_constant_differences():
    rng = np.random.default_rng(7)
    entries = [{s: float(v) for s, v in enumerate(rng.uniform(0, 100, 12)) if v > 15} for _ in range(5)]
    entries.append({s: v + 3.0 for s, v in entries[0].items()})  # a constant difference: t is infinite, p 0
    entries.append(dict(entries[1]))  # identical scores: tied, p 1
    entries.append({0: 50.0})  # at most one shared scenario: no test
    scenarios = sorted({key for means in entries for key in means})
    values = means_matrix(entries, scenarios)
    matrix = pair_matrix(values, values)
    for i, a in enumerate(entries):
        for j, b in enumerate(entries):
            expected = paired_test(a, b)
            got = matrix.test(i, j)
            assert got.n_shared == expected.n_shared
            if expected.mean_difference is None:
                assert got.mean_difference is None
            else:
                assert got.mean_difference == pytest.approx(expected.mean_difference, abs=1e-12)
            if expected.p_value is None:
                assert got.p_value is None
            else:
                assert got.p_value == pytest.approx(expected.p_value, rel=1e-9, abs=1e-15)


def test_rows_and_columns_sort_by_mean_win_rate_or_name(three_entries):
    by_rate = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE, order="winrate")
    assert [row.model.label for row in by_rate.rows] == ["Orca", "Lynx", "Idle agent"]
    assert [m.label for m in by_rate.columns] == ["Orca", "Lynx", "Idle agent"]
    by_name = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE, order="name")
    assert [row.model.label for row in by_name.rows] == ["Idle agent", "Lynx", "Orca"]
    with pytest.raises(ValueError):
        board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE, order="rank; drop")


def test_a_page_of_the_matrix_is_capped_and_the_blocks_reach_every_pair(three_entries, monkeypatch):
    monkeypatch.setattr(pairs_module, "PAIRS_PER_PAGE", 2)
    first = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE)
    assert (first.entries, first.pages) == (3, 2)
    assert [row.model.label for row in first.rows] == ["Lynx", "Orca"]
    assert [m.label for m in first.columns] == ["Lynx", "Orca"]
    corner = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE, page=2, cols=1)
    assert [row.model.label for row in corner.rows] == ["Idle agent"]
    assert [cell.b.label for cell in corner.rows[0].cells] == ["Lynx", "Orca"]
    assert corner.rows[0].cells[0].mean_difference == pytest.approx(-46.25)
    past = board_pairs_get(env="sokoban", flow="global", subset="mini", suite=SUITE, page=9, cols=9)
    assert (past.page, past.cols) == (2, 2) and past.rows[0].cells == [None]


def test_a_board_of_many_entries_shows_thirty_by_thirty_at_most(fixture_scenarios):
    keys = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True))
    attempts = []
    for index in range(31):
        sub = submission("sokoban", f"Model {index:02d}")
        Submission.objects.filter(id=sub.id).update(suite="fixture")
        attempts += [Attempt(submission=sub, scenario=sc, repeat=0, status=Attempt.Status.SCORED,
                             score=float(index + position)) for position, sc in enumerate(keys)]
    Attempt.objects.bulk_create(attempts)
    pairs = board_pairs_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert pairs.entries == 31 and pairs.pages == 2
    assert len(pairs.rows) == 30 and all(len(row.cells) == 30 for row in pairs.rows)
    last = board_pairs_get(env="sokoban", flow="global", subset="mini", suite="fixture", page=2)
    assert [row.model.label for row in last.rows] == ["Model 00"] and len(last.columns) == 30


def test_the_page_colours_each_cell_and_links_it_to_the_pairs_comparison(client, three_entries):
    url = reverse("board-pairs", args=["sokoban", "global", "mini"])
    html = client.get(url, {"suite": SUITE}).content.decode()
    lynx, idle = three_entries["lynx"].id, three_entries["idle"].id
    compare = reverse("board-compare", args=["sokoban", "global", "mini"])
    assert f'href="{compare}?suite={SUITE}&amp;a={lynx}&amp;b={idle}"' in html
    assert 'class="pair ahead sig"' in html and 'class="pair behind sig"' in html
    assert 'class="pair ahead"' in html and 'class="pair behind"' in html
    assert "+46.25" in html and "−46.25" not in html and "-46.25" in html and "100%" in html
    assert 'id="pairs-cap"' not in html
    board = client.get(reverse("board", args=["sokoban", "global", "mini"]), {"suite": SUITE}).content.decode()
    assert f'{url}?suite={SUITE}' in board
    comparison = client.get(compare, {"suite": SUITE}).content.decode()
    assert f'{url}?suite={SUITE}' in comparison


def test_the_page_notes_the_cap_and_refuses_an_unknown_order_by_name(client, three_entries, monkeypatch):
    monkeypatch.setattr(pairs_module, "PAIRS_PER_PAGE", 2)
    url = reverse("board-pairs", args=["sokoban", "global", "mini"])
    page = client.get(url, {"suite": SUITE})
    assert page.status_code == 200
    html = " ".join(page.content.decode().split())
    assert 'id="pairs-cap"' in html and "at most 2 rows by 2 columns" in html
    assert "entries 1–2 (rows) against 1–2 (columns)" in html
    refused = client.get(url, {"suite": SUITE, "order": "<script>"})
    assert refused.status_code == 400
    assert '<li data-parameter="order"><code>order</code>: &quot;&lt;script&gt;&quot; is not a valid choice.</li>' in \
        refused.content.decode()
    assert client.get(reverse("board-pairs", args=["sokoban", "global", "nope"])).status_code == 404


def test_the_api_answers_the_same_matrix_and_refuses_an_unknown_order(client, three_entries):
    url = reverse("api-board-pairs", args=["sokoban", "global", "mini"])
    body = client.get(url, {"suite": SUITE, "order": "name"}).json()
    assert [row["label"] for row in body["rows"]] == ["Idle agent", "Lynx", "Orca"]
    assert (body["entries"], body["pages"], body["per_page"], body["alpha"]) == (3, 1, 30, 0.05)
    idle_lynx = body["cells"][0][1]
    assert idle_lynx["a"] == three_entries["idle"].id and idle_lynx["b"] == three_entries["lynx"].id
    assert idle_lynx["mean_difference"] == pytest.approx(-46.25) and idle_lynx["win_rate"] == 0.0
    assert idle_lynx["significant"] is True and body["cells"][0][0] is None
    assert client.get(url, {"suite": SUITE, "order": "rank"}).status_code == 400
    assert client.get(url, {"suite": SUITE, "page": "0"}).status_code == 400
    schema = client.get(reverse("api-schema"), HTTP_ACCEPT="application/json").json()
    documented = schema["paths"]["/api/v1/boards/{env}/{flow}/{subset}/pairs/"]["get"]
    assert {p["name"] for p in documented["parameters"]} >= {"suite", "page", "cols", "order"}
    assert "win_rate" in schema["components"]["schemas"]["PairCell"]["properties"]
