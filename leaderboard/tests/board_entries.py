"""Entries with hand-set scores on the Sokoban Global mini fixture board, for the board-browsing tests."""
from __future__ import annotations

from dataclasses import dataclass

from accounts.models import Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild


def finished_entry(team: Team, model: ModelEntry, scores: list[float], *, flow: str = "global",
                   public: bool = True, hidden: bool = False) -> Submission:
    """A finished submission scoring ``scores`` on the first len(scores) mini scenarios, one repeat each."""
    submission = Submission.objects.create(
        team=team, model=model, environment_id="sokoban", flow=flow, subset="mini", suite="fixture",
        status=Submission.Status.COMPLETED, is_public=public, hidden=hidden, hidden_reason="spam" if hidden else "",
        settings={"repeats": 1})
    scenarios = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key")
    for scenario, score in zip(scenarios, scores, strict=False):
        Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                               score=score)
    submission_result_rebuild(submission_id=submission.id)
    return submission


@dataclass
class Entries:
    lab: Team
    vision: ModelEntry
    full: Submission
    tiny: Submission
    partial: Submission
    private: Submission
    hidden: Submission


def board_entries(lab: Team) -> Entries:
    """On the Sokoban Global mini board (10 scenarios): Vision-7B scores 60 everywhere, Tiny (another
    team) 50, Partial 90 on 2 scenarios only; Vision-7B also has a private Online entry and a hidden one."""
    assert Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).count() == 10
    other = Team.objects.create(name="Other", slug="other")
    vision = ModelEntry.objects.create(team=lab, name="Vision-7B", organisation="Acme",
                                       parameter_count=7_000_000_000, open_weights=True, licence="apache-2.0",
                                       link="https://example.org/vision-7b")
    tiny = ModelEntry.objects.create(team=other, name="Tiny", organisation="Small Co", parameter_count=400_000_000)
    partial = ModelEntry.objects.create(team=other, name="Partial", organisation="Small Co")
    return Entries(
        lab=lab, vision=vision, full=finished_entry(lab, vision, [60.0] * 10),
        tiny=finished_entry(other, tiny, [50.0] * 10),
        partial=finished_entry(other, partial, [90.0, 90.0]),
        private=finished_entry(lab, vision, [70.0] * 10, flow="online", public=False),
        hidden=finished_entry(lab, vision, [95.0] * 10, hidden=True))
