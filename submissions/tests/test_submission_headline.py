"""The submission page leads with its numbers and its rank, taken from its board's own ranking."""
from __future__ import annotations

import re

import pytest
from django.template.defaultfilters import floatformat
from django.test import Client
from django.urls import reverse

from accounts.models import Team
from catalogue.models import Scenario
from catalogue.services import environment_ensure
from leaderboard.selectors import BoardFilter, board_get
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.django_db

SUITE = "handmade"


def _scenario(key: str) -> Scenario:
    return Scenario.objects.create(environment=environment_ensure("sokoban"), suite=SUITE, key=key, in_mini=True,
                                   in_full=True, content_hash=key)


def _submission(team: Team, name: str, scores: dict[Scenario, list[float]], *, public: bool = True,
                baseline: bool = False, status: str = Submission.Status.COMPLETED) -> Submission:
    model = ModelEntry.objects.create(team=team, name=name, is_baseline=baseline)
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite=SUITE, status=status, is_public=public,
                                           is_baseline=baseline)
    for scenario, values in scores.items():
        for repeat, score in enumerate(values):
            Attempt.objects.create(submission=submission, scenario=scenario, repeat=repeat,
                                   status=Attempt.Status.SCORED, score=score)
    return submission


@pytest.fixture
def board(lab):
    """Two public entries of another team, the lab's private one, a baseline and unranked ones."""
    s1, s2 = _scenario("1-Sokoban-small-v0"), _scenario("2-Sokoban-small-v0")
    others = Team.objects.create(name="Others", slug="others")
    entries = {
        # Mean of every score 30; scenario means 20 and 50, so SE = sd(20, 50) / sqrt(2) = 15.
        "alpha": _submission(others, "Alpha", {s1: [10.0, 30.0], s2: [50.0]}),
        "beta": _submission(others, "Beta", {s1: [40.0, 42.0], s2: [38.0]}),
        "gamma": _submission(lab.team, "Gamma", {s1: [60.0], s2: [64.0]}, public=False),
        "idle": _submission(others, "Idle agent", {s1: [0.0], s2: [0.0]}, baseline=True),
        "running": _submission(others, "Still going", {s1: [10.0]}, status=Submission.Status.RUNNING),
        "cancelled": _submission(others, "Stopped", {s1: [10.0]}, status=Submission.Status.CANCELLED),
    }
    return entries


def _headline(client: Client, submission: Submission) -> str:
    page = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    start = page.index('id="headline"')
    return page[start:page.index("</section>", start)]


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_it_shows_the_mean_se_ci_and_rank_the_public_board_shows(board):
    headline = _text(_headline(Client(), board["alpha"]))
    assert "30.00" in headline and "± 15.00 SE" in headline
    assert "rank 2 of 2 on Sokoban · Global · mini" in headline
    row = next(r for r in board_get(env="sokoban", flow="global", subset="mini", suite=SUITE,
                                    filters=BoardFilter()).rows if r.submission_id == board["alpha"].id)
    assert (row.rank, floatformat(row.mean, 2), floatformat(row.se, 2)) == (2, "30.00", "15.00")
    assert f"95% CI [{floatformat(row.ci_low, 2)}, {floatformat(row.ci_high, 2)}]" in headline
    assert "rank 1 of 2 on Sokoban · Global · mini" in _text(_headline(Client(), board["beta"]))


def test_the_rank_links_to_the_board_with_its_suite(board):
    html = _headline(Client(), board["beta"])
    assert f'href="{reverse("board", args=["sokoban", "global", "mini"])}?suite={SUITE}"' in html


def test_a_team_member_sees_ranks_on_the_board_as_their_team_sees_it(board, lab):
    # The lab's private Gamma (mean 62) leads the board its members see, as it does on the board page.
    assert "rank 3 of 3 on" in _text(_headline(lab.client, board["alpha"]))
    gamma = _text(_headline(lab.client, board["gamma"]))
    assert "62.00" in gamma and "rank 1 of 3 on Sokoban · Global · mini (as your team sees the board)" in gamma
    assert "Private" in gamma and "publishes it" in gamma
    board_page = lab.client.get(reverse("board", args=["sokoban", "global", "mini"]) + f"?suite={SUITE}")
    assert "Gamma" in board_page.content.decode()


def test_it_says_why_there_is_no_rank(board, lab):
    anonymous = Client()
    idle = _text(_headline(anonymous, board["idle"]))
    assert "0.00" in idle and "never ranked" in idle and not re.search(r"rank \d", idle)
    running = _text(_headline(anonymous, board["running"]))
    assert "still running" in running and not re.search(r"rank \d", running)
    assert "cancelled" in _text(_headline(anonymous, board["cancelled"]))
    Submission.objects.filter(id=board["beta"].id).update(hidden=True, hidden_reason="copied outputs")
    assert "hidden from the boards" in _text(_headline(anonymous, board["beta"]))


def test_an_entry_with_nothing_scored_says_so(lab):
    s1 = _scenario("1-Sokoban-small-v0")
    model = ModelEntry.objects.create(team=lab.team, name="Broken")
    failed = Submission.objects.create(team=lab.team, model=model, environment_id="sokoban", flow="global",
                                       subset="mini", suite=SUITE, status=Submission.Status.INCOMPLETE, is_public=True)
    Attempt.objects.create(submission=failed, scenario=s1, repeat=0, status=Attempt.Status.INFRA_FAILED)
    headline = _text(_headline(lab.client, failed))
    assert "none of its attempts was scored" in headline and not re.search(r"rank \d", headline)


def test_an_incomplete_entry_keeps_the_rank_its_board_gives_it_and_says_what_is_missing(board):
    Submission.objects.filter(id=board["alpha"].id).update(status=Submission.Status.INCOMPLETE,
                                                           missing_scenarios=["3-Sokoban-v1", "4-Sokoban-v1"])
    headline = _text(_headline(Client(), board["alpha"]))
    assert "rank 2 of 2 on Sokoban · Global · mini" in headline
    assert "incomplete 2 scenario(s) of the subset have no run: the numbers cover only what was scored" in headline
