"""The summary across environments read from stored boards: Sokoban between its idle floor and 100,
WebUI as AES %, Football between the paper's Idle baseline and its best model result (fixed numbers,
whatever the board's entries)."""
from __future__ import annotations

import math
import re
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
    # Football (Online only): the Idle baseline 1, Tiny 11, Vision 6.
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
    assert football.reference is not None and sokoban.reference is None and webui.reference is None
    assert football.floor_text == "2.53, the paper's Idle baseline on the mini set (Table 1)"
    assert football.ceiling_text == ("21.2, GPT-4o's mean on the mini set, the best model result the paper "
                                     "reports (Table 1)")
    assert sokoban.floor_text == "100 − 5 · R_ub per level: what doing nothing scores (closed form)"
    assert sokoban.ceiling_text == "100 per level: an optimal solution (B_T = R_ub)"
    assert webui.ceiling_text == "AES 100 %: a page identical to its target in every state"
    row = summary.row_of(models["vision"].id)
    assert row is not None
    cells = dict(zip(["football", "sokoban", "webui"], row.cells, strict=True))
    # Football: 100 · (6 − 2.53) / (21.2 − 2.53) = 347 / 18.67 = 18.586 on every scenario, so no spread.
    assert cells["football"].mean == pytest.approx(18.585967, abs=1e-6)
    assert cells["football"].se == pytest.approx(0.0)
    # Sokoban: five scenarios at 40 and five at 60 (of ten): mean 50, SD √(1000/9), SE 10/3.
    assert cells["sokoban"].mean == pytest.approx(50.0)
    assert cells["sokoban"].se == pytest.approx(10.0 / 3)
    # WebUI: AES is already between 0 and 100: 20, 30, 40: mean 30, SD 10, SE 10/√3.
    assert cells["webui"].mean == pytest.approx(30.0)
    assert cells["webui"].se == pytest.approx(10.0 / math.sqrt(3))
    # Across: (18.586 + 50 + 30) / 3 = 32.862; SE √(0 + 100/9 + 100/3) / 3 = (20/3) / 3 = 2.22.
    assert row.mean == pytest.approx((34700.0 / 1867 + 80.0) / 3)
    assert row.se == pytest.approx(20.0 / 9)
    assert cells["sokoban"].n_scenarios == 10 and cells["sokoban"].submission_id is not None


def test_a_model_without_every_environment_has_no_mean_and_says_which_it_lacks(models) -> None:
    summary = summary_get(flow="online", subset="mini")
    tiny = summary.row_of(models["tiny"].id)
    idle = summary.row_of(models["idle"].id)
    assert tiny is not None and idle is not None
    # 100 · (11 − 2.53) / 18.67 = 45.367 and 100 · (1 − 2.53) / 18.67 = −8.195: the paper's numbers are
    # the ends, not the board's best entry or its Idle entry.
    assert tiny.cells[0] is not None and tiny.cells[0].mean == pytest.approx(84700.0 / 1867)
    assert idle.cells[0] is not None and idle.cells[0].mean == pytest.approx(-15300.0 / 1867)
    assert tiny.mean is None and tiny.why_no_mean == (
        "No complete entry on Sokoban, WebUI: a mean needs every environment.")
    # The Online summary has no Sokoban or WebUI entry of Vision's (they are Global): no mean either.
    vision = summary.row_of(models["vision"].id)
    assert vision is not None and vision.mean is None and vision.cells[0].mean == pytest.approx(34700.0 / 1867)


def test_adding_a_better_entry_changes_no_other_entrys_normalised_score(db, fixture_scenarios, lab) -> None:
    other = ModelEntry.objects.create(team=lab.team, name="Other")
    finished(lab.team, other, "football", "online", lambda i, s: 2.0 + i)
    before = summary_get(flow="online", subset="mini").row_of(other.id)
    assert before is not None and before.cells[0] is not None
    # Three scenarios at 2, 3 and 4: mean 3, SD 1, SE 1/√3; 100 · (3 − 2.53) / 18.67 = 2.5174 ±
    # 100 · (1/√3) / 18.67 = 3.0925: the linear map of the mean and of its SE.
    assert len(mini("football")) == 3
    assert before.cells[0].mean == pytest.approx(4700.0 / 1867)
    assert before.cells[0].se == pytest.approx(100.0 / (18.67 * math.sqrt(3)))
    best = ModelEntry.objects.create(team=lab.team, name="Best")
    finished(lab.team, best, "football", "online", lambda i, s: 30.0)
    after = summary_get(flow="online", subset="mini")
    row = after.row_of(other.id)
    assert row is not None and row.cells[0] is not None
    assert (row.cells[0].mean, row.cells[0].se) == (before.cells[0].mean, before.cells[0].se)
    # A model above the paper's best reads above 100: 100 · (30 − 2.53) / 18.67 = 147.13.
    top = after.row_of(best.id)
    assert top is not None and top.cells[0] is not None and top.cells[0].mean == pytest.approx(274700.0 / 1867)


def test_a_model_page_reads_its_rows_of_the_same_summaries(models) -> None:
    rows = model_summaries(models["vision"].id)
    assert [(summary.flow, summary.subset) for summary, _ in rows] == [("global", "mini"), ("online", "mini")]
    home = summary_get(flow="global", subset="mini").row_of(models["vision"].id)
    assert home is not None and rows[0][1].mean == pytest.approx(home.mean)


@pytest.mark.parametrize(("env", "words"), [
    ("sokoban", "ceiling 100 (an optimal solution, B_T = R_ub, scores exactly 100 + 5 · 0)"),
    ("webui", "The summary's score is therefore the AES % itself."),
    ("football", "floor 2.53 (the paper's Idle baseline on the mini set (Table 1)), ceiling 21.2 (GPT-4o's mean"),
])
def test_each_metric_card_says_how_its_environment_is_normalised(client, db, env, words) -> None:
    from django.utils.html import escape

    from leaderboard.selectors.summary import METHOD

    page = client.get(f"/environments/{env}/").content.decode()
    section = page[page.index('<section id="normalisation">'):]
    assert escape(words) in section and escape(METHOD) in section


def test_a_model_page_names_each_environments_floor_and_ceiling_once_with_the_boards_it_holds_for(client,
                                                                                                 models) -> None:
    page = client.get(f"/models/{models['vision'].id}/").content.decode()
    notes = page[page.index('<dl class="across-scales" id="across-scales">'):]
    notes = notes[:notes.index("</dl>")]
    # Its Global · mini row and its Online · mini row: Sokoban and WebUI have the same floor and ceiling in
    # both flows, so each is named once with both boards; Football (Online in both rows) once.
    assert re.findall(r'<dt data-env="(\w+)">\w+ <small>([^<]*)</small>', notes) == [
        ("football", "Online · mini"), ("sokoban", "Global · mini, Online · mini"),
        ("webui", "Global · mini, Online · mini")]
    assert notes.count("<dd ") == 3
    assert notes.count("Ceiling: 21.2, GPT-4o&#x27;s mean on the mini set") == 1


def test_an_environments_floor_and_ceiling_notes_stay_together_in_the_order_first_met():
    from leaderboard.selectors.summary import Scale, scale_notes

    def scale(env: str, subset: str, ceiling: str) -> Scale:
        return Scale(env=env, title=env.title(), flow="online", subset=subset, suite="fixture", scenarios=2,
                     floors={"plugin": 2}, ceilings={"plugin": 2}, ceiling_meaning=ceiling)

    # Football's mini and full boards read different published ceilings, so each has a note of its own.
    notes = scale_notes([scale("football", "mini", "21.2"), scale("sokoban", "mini", "optimal"),
                         scale("football", "full", "19.61"), scale("sokoban", "full", "optimal")])
    assert [(note.env, note.boards) for note in notes] == [
        ("football", "Online · mini"), ("football", "Online · full"), ("sokoban", "Online · mini, Online · full")]
