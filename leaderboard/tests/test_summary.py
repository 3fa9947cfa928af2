"""The summary across environments read from stored boards: Sokoban between its idle floor and 100,
WebUI as AES %, Football relative to its Idle baseline and its best entry."""
from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from accounts.models import Team
from catalogue.models import Scenario
from leaderboard.selectors import model_summaries, summary_get
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild


def mini(env: str) -> list[Scenario]:
    return list(Scenario.objects.filter(environment_id=env, suite="fixture", in_mini=True).order_by("key"))


def finished(team: Team, model: ModelEntry, env: str, flow: str, score: Callable[[int, Scenario], float],
             *, baseline: bool = False) -> Submission:
    """A completed public entry on ``env``'s ``flow`` mini board, scoring ``score(index, scenario)``
    on every scenario of it, one repeat each."""
    submission = Submission.objects.create(
        team=team, model=model, environment_id=env, flow=flow, subset="mini", suite="fixture",
        status=Submission.Status.COMPLETED, is_public=True, is_baseline=baseline, settings={"repeats": 1})
    for index, scenario in enumerate(mini(env)):
        Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                               score=score(index, scenario))
    submission_result_rebuild(submission_id=submission.id)
    return submission


def sokoban_floor(scenario: Scenario) -> float:
    return 100.0 - 5.0 * float(scenario.data["upper_bound"]["reward"])


@pytest.fixture
def models(db, fixture_scenarios, lab) -> dict[str, ModelEntry]:
    return summary_entries(lab.team)


def summary_entries(team: Team) -> dict[str, ModelEntry]:
    """Vision-7B (``team``'s) on Sokoban and WebUI Global and Football Online; Tiny on Football only;
    the Idle baseline on Football."""
    other = Team.objects.create(name="Other", slug="other")
    platform = Team.objects.create(name="MageBench baselines", slug="baselines")
    vision = ModelEntry.objects.create(team=team, name="Vision-7B")
    tiny = ModelEntry.objects.create(team=other, name="Tiny")
    idle = ModelEntry.objects.create(team=platform, name="Idle agent", is_baseline=True)
    # Sokoban: 40 % of the way from each level's idle floor to 100 on the first half, 60 % on the rest.
    half = len(mini("sokoban")) // 2
    finished(team, vision, "sokoban", "global",
             lambda i, s: sokoban_floor(s) + (0.4 if i < half else 0.6) * (100.0 - sokoban_floor(s)))
    # WebUI (three scenarios): AES 20 %, 30 % and 40 %.
    finished(team, vision, "webui", "global", lambda i, s: 20.0 + 10.0 * i)
    # Football (Online only): the Idle baseline 1, Tiny 11 (the best), Vision 6: half-way.
    finished(platform, idle, "football", "online", lambda i, s: 1.0, baseline=True)
    finished(other, tiny, "football", "online", lambda i, s: 11.0)
    finished(team, vision, "football", "online", lambda i, s: 6.0)
    return {"vision": vision, "tiny": tiny, "idle": idle}


def test_each_environment_is_normalised_between_its_floor_and_ceiling_and_averaged_across(models) -> None:
    assert (len(mini("sokoban")), len(mini("webui"))) == (10, 3)
    summary = summary_get(flow="global", subset="mini")
    assert [(scale.env, scale.flow) for scale in summary.scales] == [
        ("football", "online"), ("sokoban", "global"), ("webui", "global")]
    football, sokoban, webui = summary.scales
    assert football.relative and not sokoban.relative and not webui.relative
    assert football.floor_text == "the Idle baseline entry's mean"
    assert sokoban.floor_text == "the score of doing nothing (closed form)"
    row = summary.row_of(models["vision"].id)
    assert row is not None
    cells = dict(zip(["football", "sokoban", "webui"], row.cells, strict=True))
    # Football: (6 − 1) / (11 − 1) = 50 % on every scenario, so no spread.
    assert cells["football"].mean == pytest.approx(50.0) and cells["football"].se == pytest.approx(0.0)
    # Sokoban: five scenarios at 40 and five at 60 (of ten): mean 50, SD √(1000/9), SE 10/3.
    assert cells["sokoban"].mean == pytest.approx(50.0)
    assert cells["sokoban"].se == pytest.approx(10.0 / 3)
    # WebUI: AES is already between 0 and 100: 20, 30, 40: mean 30, SD 10, SE 10/√3.
    assert cells["webui"].mean == pytest.approx(30.0)
    assert cells["webui"].se == pytest.approx(10.0 / math.sqrt(3))
    # Across: (50 + 50 + 30) / 3 = 43.33; SE √(0 + 100/9 + 100/3) / 3 = (20/3) / 3 = 2.22.
    assert row.mean == pytest.approx(130.0 / 3)
    assert row.se == pytest.approx(20.0 / 9)
    assert cells["sokoban"].n_scenarios == 10 and cells["sokoban"].submission_id is not None


def test_a_model_without_every_environment_has_no_mean_and_says_which_it_lacks(models) -> None:
    summary = summary_get(flow="online", subset="mini")
    tiny = summary.row_of(models["tiny"].id)
    idle = summary.row_of(models["idle"].id)
    assert tiny is not None and idle is not None
    assert tiny.cells[0] is not None and tiny.cells[0].mean == pytest.approx(100.0)  # the best entry is the ceiling
    assert idle.cells[0] is not None and idle.cells[0].mean == pytest.approx(0.0)  # the Idle entry is the floor
    assert tiny.mean is None and tiny.why_no_mean == (
        "No complete entry on Sokoban, WebUI: a mean needs every environment.")
    # The Online summary has no Sokoban or WebUI entry of Vision's (they are Global): no mean either.
    vision = summary.row_of(models["vision"].id)
    assert vision is not None and vision.mean is None and vision.cells[0].mean == pytest.approx(50.0)


def test_without_an_idle_baseline_the_relative_floor_is_zero_and_the_scale_says_so(db, fixture_scenarios, lab) -> None:
    tiny = ModelEntry.objects.create(team=lab.team, name="Tiny")
    finished(lab.team, tiny, "football", "online", lambda i, s: 8.0)
    other = ModelEntry.objects.create(team=lab.team, name="Other")
    finished(lab.team, other, "football", "online", lambda i, s: 2.0)
    summary = summary_get(flow="online", subset="mini")
    assert summary.scales[0].floor_text == "0 (no closed form and no Idle baseline mean)"
    row = summary.row_of(other.id)
    assert row is not None and row.cells[0].mean == pytest.approx(25.0)  # (2 − 0) / (8 − 0)


def test_a_model_page_reads_its_rows_of_the_same_summaries(models) -> None:
    rows = model_summaries(models["vision"].id)
    assert [(summary.flow, summary.subset) for summary, _ in rows] == [("global", "mini"), ("online", "mini")]
    home = summary_get(flow="global", subset="mini").row_of(models["vision"].id)
    assert home is not None and rows[0][1].mean == pytest.approx(home.mean)


@pytest.mark.parametrize(("env", "words"), [
    ("sokoban", "ceiling 100 (an optimal solution, B_T = R_ub, scores exactly 100 + 5 · 0)"),
    ("webui", "The summary's score is therefore the AES % itself."),
    ("football", "The summary is therefore relative to the best entry on the board"),
])
def test_each_metric_card_says_how_its_environment_is_normalised(client, db, env, words) -> None:
    from django.utils.html import escape

    from leaderboard.selectors.summary import METHOD

    page = client.get(f"/environments/{env}/").content.decode()
    section = page[page.index('<section id="normalisation">'):]
    assert escape(words) in section and escape(METHOD) in section
