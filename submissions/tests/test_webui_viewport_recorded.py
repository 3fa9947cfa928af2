"""WebUI submissions stored while 1920×1080 was the default keep reading as 1080, a labelled variant."""
from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps

from accounts.models import Team
from catalogue.models import Scenario
from evaluators.settings import EvaluationSettings
from evaluators.webui.options import WebUIOptions
from leaderboard.selectors import board_get
from submissions.models import Attempt, ModelEntry, Submission

migration = importlib.import_module("submissions.migrations.0018_webui_viewport_recorded")


def _stored_before_the_change(**given: Any) -> dict[str, Any]:
    """A WebUI Global submission's settings as they were stored while 1080 was the default: the
    viewport left out, or the old setting when a submitter asked for 937."""
    stored = EvaluationSettings.defaults("webui", "global").to_dict()
    del stored["webui_viewport_1080"]
    return {**stored, **given}


def _entry(team: Team, name: str, settings: dict[str, Any], *, source: str = Submission.Source.ENDPOINT,
           score: float = 40.0) -> Submission:
    model = ModelEntry.objects.create(team=team, name=name)
    submission = Submission.objects.create(team=team, model=model, environment_id="webui", flow="global",
                                           subset="mini", suite="fixture", source=source, settings=settings,
                                           status=Submission.Status.COMPLETED, is_public=True)
    scenarios = Scenario.objects.filter(environment_id="webui", suite="fixture", in_mini=True).order_by("key")
    for index, scenario in enumerate(scenarios):
        Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                               score=score + index)
    return submission


def _viewport(submission: Submission) -> int:
    submission.refresh_from_db()
    return WebUIOptions.of(submission.evaluation_settings).viewport_height


@pytest.mark.django_db
def test_stored_submissions_keep_the_viewport_they_ran_at_and_the_migration_goes_back(fixture_scenarios):
    team = Team.objects.create(name="Lab", slug="lab")
    old_default = _entry(team, "Old default", _stored_before_the_change())
    uploaded = _entry(team, "Old upload", _stored_before_the_change(), source=Submission.Source.UPLOAD)
    asked_937 = _entry(team, "Asked for 937", _stored_before_the_change(webui_viewport_937=True))
    asked_1080 = _entry(team, "Asked for 1080", _stored_before_the_change(webui_viewport_937=False))
    before = {entry.id: dict(entry.settings) for entry in (old_default, uploaded, asked_937, asked_1080)}

    migration.record_the_viewport(apps, None)

    for entry in (old_default, uploaded, asked_1080):
        assert _viewport(entry) == 1080
        assert entry.settings["webui_viewport_1080"] is True and "webui_viewport_937" not in entry.settings
        assert entry.evaluation_settings.variant_names() == ["webui_viewport_1080"]
    assert _viewport(asked_937) == 937 and asked_937.settings["webui_viewport_1080"] is False
    assert asked_937.evaluation_settings.variant_names() == []
    migration.record_the_viewport(apps, None)  # running it again changes nothing
    assert _viewport(old_default) == 1080 and _viewport(asked_937) == 937

    migration.restore_the_old_setting(apps, None)
    restored = {entry.id: entry.settings for entry in Submission.objects.filter(id__in=before)}
    assert restored[old_default.id] == before[old_default.id] == restored[uploaded.id]
    assert restored[asked_937.id] == before[asked_937.id]


@pytest.mark.django_db
def test_a_board_labels_the_pre_change_1080_entry_a_variant_and_ranks_the_official_viewport(fixture_scenarios):
    team = Team.objects.create(name="Lab", slug="lab")
    old = _entry(team, "Ran at 1080", _stored_before_the_change(), score=60.0)
    new = _entry(team, "Ran at 937", EvaluationSettings.defaults("webui", "global").to_dict(), score=40.0)
    migration.record_the_viewport(apps, None)
    board = board_get(env="webui", flow="global", subset="mini", suite="fixture")
    rows = {row.submission_id: row for row in board.rows}
    assert rows[old.id].variant == ("webui_viewport_1080",) and rows[old.id].rank is None
    assert rows[new.id].variant == () and rows[new.id].rank == 1
