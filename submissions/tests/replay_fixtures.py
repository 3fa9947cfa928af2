"""The rows behind a replay in tests: a finished, scored submission of one scenario, built directly so
that a replay page can be tested on trajectories written by hand."""
from __future__ import annotations

from accounts.models import Team
from catalogue.models import Environment, Scenario
from submissions.models import ModelEntry, Submission

#: The environments' rows as the plug-ins register them.
ENVIRONMENTS = {"football": ("Football", "Reward", 2), "webui": ("WebUI", "AES", 3)}


def finished_submission(*, env: str, scenario_key: str, team: str, model: str, flow: str,
                        is_public: bool = True) -> tuple[Scenario, Submission]:
    """A completed submission of ``model`` by ``team`` on ``env``'s mini board, and its one scenario."""
    title, score_label, position = ENVIRONMENTS[env]
    environment, _ = Environment.objects.get_or_create(
        slug=env, defaults={"title": title, "score_label": score_label, "position": position})
    # Each scenario its own content: tests that build several never share a hash.
    content_hash = f"{Scenario.objects.count():064d}"
    scenario = Scenario.objects.create(environment=environment, suite="fixture", key=scenario_key, in_mini=True,
                                       content_hash=content_hash)
    owner = Team.objects.create(name=team, slug=team.lower().replace(" ", "-"))
    submission = Submission.objects.create(
        is_public=is_public, team=owner, model=ModelEntry.objects.create(team=owner, name=model),
        environment=environment, flow=flow, subset="mini", suite="fixture", status=Submission.Status.COMPLETED)
    return scenario, submission
