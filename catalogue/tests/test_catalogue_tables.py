"""The catalogue became its own app without moving a row: a deployment upgrades with ``migrate`` alone."""
from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from catalogue.models import Environment, ReportedResult, Scenario, SuitePromptSet

BEFORE = [("leaderboard", "0008_entry_analysis_panels"), ("submissions", "0013_alter_submission_flow"),
          ("catalogue", None)]


def _migrate(targets: list[tuple[str, str | None]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state([(app, name) for app, name in targets if name is not None]).apps


def _latest() -> list[tuple[str, str | None]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def test_the_catalogue_models_keep_the_tables_they_were_created_in() -> None:
    tables = {model: model._meta.db_table for model in (Environment, Scenario, ReportedResult, SuitePromptSet)}
    assert tables == {Environment: "leaderboard_environment", Scenario: "leaderboard_scenario",
                      ReportedResult: "leaderboard_reportedresult", SuitePromptSet: "leaderboard_suitepromptset"}


@pytest.mark.django_db(transaction=True)
def test_rows_written_before_the_catalogue_moved_are_read_through_it_after_migrate() -> None:
    latest = _latest()
    try:
        old = _migrate(BEFORE)
        environment = old.get_model("leaderboard", "Environment").objects.create(
            slug="sokoban", title="Sokoban", score_label="score")
        scenario = old.get_model("leaderboard", "Scenario").objects.create(
            environment=environment, suite="fixture", key="level_1", content_hash="x" * 64)
        team = old.get_model("accounts", "Team").objects.create(name="Lab", slug="lab")
        model = old.get_model("submissions", "ModelEntry").objects.create(team=team, name="m")
        submission = old.get_model("submissions", "Submission").objects.create(
            team=team, model=model, environment=environment, flow="global", subset="mini", suite="fixture")
        old.get_model("submissions", "Attempt").objects.create(submission=submission, scenario=scenario, repeat=0)

        new = _migrate(latest)

        moved = new.get_model("catalogue", "Scenario").objects.get(id=scenario.id)
        assert (moved.environment_id, moved.key) == ("sokoban", "level_1")
        attempt = new.get_model("submissions", "Attempt").objects.get(submission_id=submission.id)
        assert attempt.scenario.key == "level_1" and attempt.submission.environment.title == "Sokoban"
    finally:
        _migrate(latest)
