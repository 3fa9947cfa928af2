"""The analysis and comparison of one board, on hand-made attempts with hand-computed expectations."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Team
from catalogue.models import Scenario
from catalogue.services import environment_ensure
from leaderboard.analysis import (
    ScenarioRef,
    board_analysis_get,
    board_compare_get,
    compare_scenarios,
    natural_key,
)
from scoring.stats import best_of_n_curve, paired_test
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.django_db

SUITE = "handmade"


def scenario(env: str, key: str, *, mini: bool = True, **tags: object) -> Scenario:
    return Scenario.objects.create(environment=environment_ensure(env), suite=SUITE, key=key, in_mini=mini,
                                   in_full=True, tags=tags, content_hash=key)


def submission(env: str, name: str, *, flow: str = "global", baseline: bool = False,
               status: str = Submission.Status.COMPLETED) -> Submission:
    team, _ = Team.objects.get_or_create(name="Baselines" if baseline else "Lab",
                                         defaults={"slug": "baselines" if baseline else "lab"})
    model = ModelEntry.objects.create(team=team, name=name, is_baseline=baseline)
    return Submission.objects.create(is_public=True, team=team, model=model, environment_id=env, flow=flow,
                                     subset="mini", suite=SUITE, status=status, is_baseline=baseline)


def scored(sub: Submission, sc: Scenario, *scores: float, ia: tuple[int, ...] = (), ra: tuple[int, ...] = (),
           details: list[dict] | None = None) -> list[Attempt]:
    """Scored repeats 0, 1, … of ``sc``; ``ia`` / ``ra`` list the repeats flagged with that diagnostic."""
    return [Attempt.objects.create(submission=sub, scenario=sc, repeat=repeat, status=Attempt.Status.SCORED,
                                   score=score, invalid_action=repeat in ia, repeating_action=repeat in ra,
                                   details=(details or [{}] * len(scores))[repeat])
            for repeat, score in enumerate(scores)]


@dataclass
class SokobanBoard:
    s1: Scenario
    s2: Scenario
    s10: Scenario
    unplayed: Scenario
    alpha: Submission
    beta: Submission
    idle: Submission
    first_alpha_s1: Attempt


@pytest.fixture
def sokoban_board() -> SokobanBoard:
    # Keys chosen so that natural order (1, 2, 10, 11) differs from string order (1, 10, 11, 2).
    s1 = scenario("sokoban", "1-Sokoban-small-v0", variant="small-v0", boxes=1)
    s2 = scenario("sokoban", "2-Sokoban-small-v0", variant="small-v0", boxes=2)
    s10 = scenario("sokoban", "10-Sokoban-v1", variant="v1", boxes=2)
    unplayed = scenario("sokoban", "11-Sokoban-v1", variant="v1", boxes=3)
    scenario("sokoban", "12-Sokoban-v2", mini=False, variant="v2", boxes=4)  # full subset only: not on the board
    alpha, beta = submission("sokoban", "Alpha"), submission("sokoban", "Beta")
    idle = submission("sokoban", "Idle agent", baseline=True)
    first = scored(alpha, s1, 10.0, 30.0, 20.0, ia=(0, 1), ra=(2,))[0]
    scored(alpha, s2, 50.0, 70.0, ia=(0,))
    scored(alpha, s10, 0.0)
    Attempt.objects.create(submission=alpha, scenario=s10, repeat=1, status=Attempt.Status.INFRA_FAILED)
    scored(beta, s1, 40.0, 40.0)
    scored(beta, s2, 60.0)
    scored(beta, s10, 10.0)
    scored(idle, s1, 0.0)
    scored(idle, s2, 0.0)
    # Neither a running submission nor another suite's may leak into the board.
    scored(submission("sokoban", "Still running", status=Submission.Status.RUNNING), s1, 99.0)
    return SokobanBoard(s1, s2, s10, unplayed, alpha, beta, idle, first)


def analysis_of(env: str = "sokoban", flow: str = "global"):
    return board_analysis_get(env=env, flow=flow, subset="mini", suite=SUITE)


def by_label(items, attribute: str = "model"):
    return {getattr(item, attribute).label: item for item in items}


# --- pure helpers ---------------------------------------------------------------------------


def test_the_best_of_n_curve_rises_with_n_and_averages_only_scenarios_with_enough_repeats():
    curve = best_of_n_curve({"a": [10.0, 30.0, 20.0], "b": [50.0, 70.0], "c": [0.0]})
    # N=1: the means 20, 60, 0. N=2: a gives (20·1 + 30·2)/3 = 80/3 over its 3 pairs, b gives 70. N=3: only a, 30.
    assert [(p.n, p.scenarios) for p in curve] == [(1, 3), (2, 2), (3, 1)]
    assert [p.value for p in curve] == pytest.approx([80 / 3, (80 / 3 + 70) / 2, 30.0])


def test_the_best_of_n_curve_of_no_scores_is_empty():
    assert best_of_n_curve({}) == []


def test_scenario_keys_and_tag_values_sort_naturally():
    assert sorted(["10-Sokoban-v1", "2-Sokoban-v0", "1-Sokoban-v0"], key=natural_key) == [
        "1-Sokoban-v0", "2-Sokoban-v0", "10-Sokoban-v1"]
    assert sorted(["10", "3", "2"], key=natural_key) == ["2", "3", "10"]


def test_comparing_scenarios_splits_wins_ties_and_shared_failures():
    refs = {i: ScenarioRef(id=i, key=f"k{i}", tags={}) for i in range(1, 6)}
    a = {1: 90.0, 2: 10.0, 3: 50.0, 4: 5.0, 5: 70.0}
    b = {1: 40.0, 2: 30.0, 3: 50.0, 4: 1.0}  # scenario 5 is A's only: not compared
    a_wins, b_wins, ties, both_fail = compare_scenarios(a, b, refs, threshold=20.0, a_attempts={1: 11})
    assert [(d.scenario.key, d.delta) for d in a_wins] == [("k1", 50.0), ("k4", 4.0)]
    assert [(d.scenario.key, d.delta) for d in b_wins] == [("k2", -20.0)]
    assert [d.scenario.key for d in ties] == ["k3"]
    assert [d.scenario.key for d in both_fail] == ["k4"]  # 10 vs 30 on k2: B is not below 20
    assert a_wins[0].a_attempt_id == 11 and a_wins[0].b_attempt_id is None


# --- selectors on the database -----------------------------------------------------------------


def test_the_analysis_counts_invalid_and_repeating_actions_per_scored_attempt(sokoban_board):
    errors = by_label(analysis_of().errors)
    assert set(errors) == {"Alpha", "Beta", "Idle agent"}
    # Alpha: 6 scored attempts (the infrastructure failure does not count), IA on 3, RA on 1.
    assert errors["Alpha"].n_scored == 6
    assert errors["Alpha"].ia_pct == pytest.approx(50.0) and errors["Alpha"].ra_pct == pytest.approx(100 / 6)
    assert errors["Beta"].ia_pct == 0.0 and errors["Beta"].ra_pct == 0.0
    assert analysis_of().lost == []


def test_the_analysis_draws_one_best_of_n_curve_per_model(sokoban_board):
    analysis = analysis_of()
    curves = by_label(analysis.curves)
    assert [(p.n, round(p.value, 6), p.scenarios) for p in curves["Alpha"].points] == [
        (1, round(80 / 3, 6), 3), (2, round((80 / 3 + 70) / 2, 6), 2), (3, 30.0, 1)]
    assert [(p.n, round(p.value, 6), p.scenarios) for p in curves["Beta"].points] == [
        (1, round(110 / 3, 6), 3), (2, 40.0, 1)]
    assert analysis.curve_ns == [1, 2, 3]
    table = {model.label: values for model, values in analysis.curve_table()}
    assert table["Beta"][2] is None and table["Idle agent"] == [0.0, None, None]


def test_the_analysis_averages_scenario_means_per_tag_value(sokoban_board):
    tags = {t.tag: t for t in analysis_of().tags}
    assert tags["variant"].values == ["small-v0", "v1"]  # v2 is only in the full subset
    assert tags["boxes"].values == ["1", "2", "3"]
    variant, boxes = by_label(tags["variant"].rows), by_label(tags["boxes"].rows)
    # Alpha's scenario means: s1 20, s2 60, s10 0; Beta's: 40, 60, 10.
    assert variant["Alpha"].means == pytest.approx([40.0, 0.0]) and variant["Alpha"].counts == [2, 1]
    assert variant["Beta"].means == pytest.approx([50.0, 10.0])
    assert boxes["Alpha"].means[:2] == pytest.approx([20.0, 30.0]) and boxes["Alpha"].means[2] is None
    assert boxes["Beta"].cells[:2] == [(40.0, 1), (35.0, 2)]
    assert variant["Idle agent"].means[0] == 0.0 and variant["Idle agent"].means[1] is None


def test_the_matrix_holds_each_models_scenario_means_in_natural_order_with_replay_links(sokoban_board):
    analysis = analysis_of()
    assert [s.key for s in analysis.scenarios] == ["1-Sokoban-small-v0", "2-Sokoban-small-v0", "10-Sokoban-v1",
                                                   "11-Sokoban-v1"]
    rows = by_label(analysis.matrix)
    alpha = rows["Alpha"].cells
    assert [(c.mean, c.repeats) for c in alpha[:3]] == [(20.0, 3), (60.0, 2), (0.0, 1)] and alpha[3] is None
    assert alpha[0].attempt_id == sokoban_board.first_alpha_s1.id
    assert [c.mean if c else None for c in rows["Idle agent"].cells] == [0.0, 0.0, None, None]
    # Colours run from red at the board's lowest mean (0) to green at its highest (60).
    assert alpha[2].colour == "hsl(0, 62%, 84%)" and alpha[1].colour == "hsl(120, 62%, 84%)"
    assert alpha[0].colour == "hsl(40, 62%, 84%)"
    assert [m.label for m in analysis.models] == ["Beta", "Alpha", "Idle agent"]  # the board's order, best first


def test_the_comparison_pairs_scenario_means_and_lists_wins_and_shared_failures(sokoban_board):
    cmp = board_compare_get(env="sokoban", flow="global", subset="mini", suite=SUITE,
                            a=sokoban_board.alpha.id, b=sokoban_board.beta.id)
    assert (cmp.a.label, cmp.b.label) == ("Alpha", "Beta")
    expected = paired_test({1: 20.0, 2: 60.0, 3: 0.0}, {1: 40.0, 2: 60.0, 3: 10.0})
    assert cmp.test.n_shared == 3 and cmp.test.mean_difference == pytest.approx(-10.0)
    assert cmp.test.p_value == pytest.approx(expected.p_value)
    assert cmp.a_shared_mean == pytest.approx(80 / 3) and cmp.b_shared_mean == pytest.approx(110 / 3)
    assert cmp.a_wins == []
    assert [(d.scenario.key, d.delta) for d in cmp.b_wins] == [("1-Sokoban-small-v0", -20.0), ("10-Sokoban-v1", -10.0)]
    assert [d.scenario.key for d in cmp.ties] == ["2-Sokoban-small-v0"]
    # Every per-scenario mean on the board: 20, 60, 0 · 40, 60, 10 · 0, 0 → median 15.
    assert cmp.fail_rule == "median" and cmp.fail_threshold == pytest.approx(15.0)
    assert cmp.fail_threshold == statistics.median([20, 60, 0, 40, 60, 10, 0, 0])
    assert [d.scenario.key for d in cmp.both_fail] == ["10-Sokoban-v1"]
    assert cmp.b_wins[0].a_attempt_id == sokoban_board.first_alpha_s1.id
    assert [p["key"] for p in cmp.chart_data()["points"]] == ["1-Sokoban-small-v0", "2-Sokoban-small-v0",
                                                               "10-Sokoban-v1"]


def test_the_comparison_defaults_to_the_boards_first_two_entries_and_ignores_strangers(sokoban_board):
    cmp = board_compare_get(env="sokoban", flow="global", subset="mini", suite=SUITE, a=None, b=999_999)
    assert (cmp.a.label, cmp.b.label) == ("Beta", "Alpha")
    idle = board_compare_get(env="sokoban", flow="global", subset="mini", suite=SUITE,
                             a=sokoban_board.idle.id, b=sokoban_board.beta.id)
    assert idle.test.n_shared == 2 and idle.only_b == 1 and idle.only_a == 0


def test_the_analysis_costs_the_same_queries_however_many_submissions_the_board_has(sokoban_board):
    with CaptureQueriesContext(connection) as full:
        analysis_of()
    Submission.objects.filter(id__in=[sokoban_board.beta.id, sokoban_board.idle.id]).update(
        status=Submission.Status.CANCELLED)
    with CaptureQueriesContext(connection) as one:
        assert len(analysis_of().models) == 1
    assert len(full.captured_queries) == len(one.captured_queries) <= 8


def test_the_football_analysis_maps_scenario_means_onto_the_pitch_and_categories():
    r1 = scenario("football", "R1_P_1", zone="R1", category="personal")
    r5a = scenario("football", "R5_T_1", zone="R5", category="teamwork")
    r5b = scenario("football", "R5_R_1", zone="R5", category="real-world")
    r9 = scenario("football", "R9_P_1", zone="R9", category="personal")
    striker = submission("football", "Striker", flow="online")
    scored(striker, r1, 1.0, 3.0)
    scored(striker, r5a, 4.0)
    scored(striker, r5b, 6.0)
    scored(striker, r9, -1.0)
    analysis = analysis_of("football", "online")
    assert analysis.errors and analysis.errors[0].ia_pct == 0.0
    [zones] = analysis.panels
    [row] = zones.rows
    assert zones.key == "zones" and row.model.model == "Striker"
    assert row.data == {"means": [[2.0, None, None], [None, 5.0, None], [None, None, -1.0]],
                        "counts": [[1, 0, 0], [0, 2, 0], [0, 0, 1]]}
    [category] = analysis.tags
    assert category.values == ["personal", "real-world", "teamwork"]
    assert category.rows[0].means == pytest.approx([0.5, 6.0, 4.0])
    zones = analysis.chart_data()["panels"]["zones"]
    assert zones["names"][1] == ["R4", "R5", "R6"] and zones["lanes"] == ["top", "central", "bottom"]
    assert zones["models"][0]["means"][1][1] == 5.0 and zones["models"][0]["counts"][1][1] == 2


def test_the_webui_analysis_shows_the_lost_score_composition_and_a_score_per_page():
    pricing, todo = scenario("webui", "pricing plans", interactions=3), scenario("webui", "任务清单", interactions=3)
    writer = submission("webui", "Writer")
    scored(writer, pricing, 60.0, details=[{"breakdown": {"aes": 0.6, "parse": 0.0, "render": 0.0,
                                                          "interaction": 0.1, "unmatched": 0.2, "attribute": 0.1}}])
    scored(writer, todo, 0.0, details=[{"breakdown": {"aes": 0.0, "parse": 1.0, "render": 0.0, "interaction": 0.0,
                                                      "unmatched": 0.0, "attribute": 0.0}}])
    analysis = analysis_of("webui")
    assert analysis.errors == []
    [lost] = analysis.lost
    assert lost.aes == pytest.approx(30.0)
    assert lost.parts == pytest.approx({"parse": 50.0, "render": 0.0, "interaction": 5.0, "unmatched": 10.0,
                                        "attribute": 5.0})
    assert lost.aes + sum(lost.parts.values()) == pytest.approx(100.0)
    [page] = analysis.tags
    assert page.label == "Page" and page.values == ["pricing plans", "任务清单"]
    assert page.rows[0].means == [60.0, 0.0]
    cmp = board_compare_get(env="webui", flow="global", subset="mini", suite=SUITE)
    assert cmp.b is None and cmp.fail_rule == "fixed" and cmp.fail_threshold == 50.0


def test_an_empty_board_has_an_empty_analysis_and_no_comparison():
    scenario("sokoban", "1-Sokoban-small-v0", variant="small-v0", boxes=1)
    analysis = analysis_of()
    assert analysis.models == [] and analysis.curves == [] and analysis.matrix == [] and analysis.panels == []
    assert [s.key for s in analysis.scenarios] == ["1-Sokoban-small-v0"]
    data = analysis.chart_data()
    assert data["curves"] == [] and data["panels"] == {}
    cmp = board_compare_get(env="sokoban", flow="global", subset="mini", suite=SUITE)
    assert cmp.a is None and cmp.b is None and cmp.test is None


def test_models_sharing_a_name_are_told_apart_by_submission(sokoban_board):
    team = Team.objects.get(name="Lab")
    twin = Submission.objects.create(is_public=True, team=team, model=sokoban_board.alpha.model,
                                     environment_id="sokoban", flow="global", subset="mini", suite=SUITE,
                                     status=Submission.Status.COMPLETED)
    scored(twin, sokoban_board.s1, 5.0)
    labels = {m.label for m in analysis_of().models}
    assert {f"Alpha #{sokoban_board.alpha.id}", f"Alpha #{twin.id}", "Beta"} <= labels


# --- pages ----------------------------------------------------------------------------------------


def _seed(env: str, flow: str, suite: str, name: str, scores: dict[str, list[float]]) -> Submission:
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    model = ModelEntry.objects.create(team=team, name=name)
    sub = Submission.objects.create(is_public=True, team=team, model=model, environment_id=env, flow=flow,
                                    subset="mini", suite=suite, status=Submission.Status.COMPLETED)
    for key, values in scores.items():
        scored(sub, Scenario.objects.get(environment_id=env, suite=suite, key=key), *values, ia=(0,))
    return sub


@pytest.fixture
def seeded_sokoban(fixture_scenarios):
    keys = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                .values_list("key", flat=True))
    first = _seed("sokoban", "global", "fixture", "Lab model", {k: [10.0 * i, 5.0 * i] for i, k in enumerate(keys)})
    second = _seed("sokoban", "global", "fixture", "Other model", {k: [50.0, 40.0] for k in keys[:6]})
    return first, second


def test_the_analysis_and_compare_pages_of_a_seeded_sokoban_board_render(client, seeded_sokoban):
    first, second = seeded_sokoban
    page = client.get(reverse("board-analysis", args=["sokoban", "global", "mini"]) + "?suite=fixture")
    assert page.status_code == 200
    html = page.content.decode()
    for text in ("Error breakdown", "IA %", "Best of N", "N = 2", "Variant", "Boxes", "Per scenario",
                 "Lab model", "Other model", 'id="analysis-charts"', "vendor/plotly-basic.min.js", "js/analysis.js"):
        assert text in html, text
    # The charts' data is fetched by the page's script, not carried by the page.
    assert "analysis-data" not in html and "vendor/plotly.min.js" not in html
    assert "chart-zones" not in html and "analysis_football" not in html
    charts = client.get(reverse("board-analysis", args=["sokoban", "global", "mini"]),
                        {"suite": "fixture", "charts": 1})
    assert {curve["label"] for curve in charts.json()["curves"]} == {"Lab model", "Other model"}
    attempt = Attempt.objects.filter(submission=first, repeat=0).order_by("scenario__key").first()
    assert reverse("attempt-replay", args=[attempt.id]) in html
    assert client.get(reverse("attempt-replay", args=[attempt.id])).status_code == 200
    assert reverse("board-compare", args=["sokoban", "global", "mini"]) in html

    compare = client.get(reverse("board-compare", args=["sokoban", "global", "mini"]),
                         {"suite": "fixture", "a": first.id, "b": second.id})
    assert compare.status_code == 200
    html = compare.content.decode()
    for text in ("Paired t-test", "Mean difference (A − B)", "Both fail", "median of all per-scenario means",
                 'id="compare-data"', 'id="compare-a"', f'value="{second.id}" selected', "vendor/plotly-basic.min.js"):
        assert text in html, text
    assert reverse("board-analysis", args=["sokoban", "global", "mini"]) in html


def test_the_analysis_pages_of_empty_football_and_webui_boards_render_a_friendly_message(client, fixture_scenarios):
    for env, flow in (("football", "online"), ("webui", "global")):
        for name in ("board-analysis", "board-compare"):
            response = client.get(reverse(name, args=[env, flow, "mini"]))
            assert response.status_code == 200, (env, name)
            html = response.content.decode()
            assert "No finished submissions" in html or "needs two finished submissions" in html
            assert "plotly" not in html and "analysis-charts" not in html


def test_the_football_analysis_page_offers_a_zone_heatmap_per_model(client, fixture_scenarios):
    _seed("football", "online", "fixture", "Striker", {"R3_R_1": [0.5], "R5_P_1": [1.5, 0.5], "R9_T_1": [-0.2]})
    url = reverse("board-analysis", args=["football", "online", "mini"]) + "?suite=fixture"
    html = client.get(url).content.decode()
    assert 'id="zone-model"' in html and 'id="chart-zones"' in html and "Category" in html and "Striker" in html
    # The heatmap needs the cartesian bundle; the other analysis pages draw with the basic one.
    assert "vendor/plotly-cartesian.min.js" in html and "js/analysis_football.js" in html
    charts = client.get(url + "&charts=1").json()["panels"]["zones"]
    [striker] = charts["models"]
    assert striker["label"] == "Striker" and f'value="{striker["id"]}"' in html
    assert striker["means"] == [[None, None, 0.5], [None, 1.0, None], [None, None, -0.2]]
    compare = client.get(reverse("board-compare", args=["football", "online", "mini"]) + "?suite=fixture")
    assert compare.status_code == 200 and "it has only one so far" in compare.content.decode()


def test_an_unknown_board_has_no_analysis_or_comparison(client, db):
    for name in ("board-analysis", "board-compare"):
        assert client.get(reverse(name, args=["chess", "global", "mini"])).status_code == 404
        assert client.get(reverse(name, args=["sokoban", "sideways", "mini"])).status_code == 404
        assert client.get(reverse(name, args=["sokoban", "global", "medium"])).status_code == 404
        assert client.get(reverse(name, args=["football", "global", "mini"])).status_code == 404
