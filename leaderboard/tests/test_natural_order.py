"""Scenario names in natural order wherever they are listed."""
from __future__ import annotations

import pytest

from accounts.models import Team
from catalogue.models import Environment, Scenario
from scoring.ordering import natural_key
from submissions.models import Attempt, ModelEntry, Submission
from submissions.selectors import submission_attempts


def test_numbers_inside_scenario_names_sort_by_value():
    assert sorted(["level_10", "level_2", "level_1"], key=natural_key) == ["level_1", "level_2", "level_10"]
    assert sorted(["R10_R_1.py", "R3_R_2.py", "R3_R_1.py"], key=natural_key) == [
        "R3_R_1.py", "R3_R_2.py", "R10_R_1.py"]
    assert sorted(["faq-accordion~10", "faq-accordion~2", "faq-accordion"], key=natural_key) == [
        "faq-accordion", "faq-accordion~2", "faq-accordion~10"]


def test_letters_compare_without_case_and_before_a_longer_name():
    assert sorted(["b_1", "A_2", "a_1"], key=natural_key) == ["a_1", "A_2", "b_1"]



@pytest.mark.django_db
def test_a_submission_lists_its_scenarios_in_natural_order_then_by_repeat():
    environment, _ = Environment.objects.get_or_create(
        slug="sokoban", defaults={"title": "Sokoban", "score_label": "Score", "position": 1})
    team = Team.objects.create(name="Order lab", slug="order-lab")
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name="Sorter"),
                                           environment=environment, flow="global", subset="mini", suite="ordering")
    for key in ("level_10", "level_2", "level_1"):
        scenario = Scenario.objects.create(environment=environment, suite="ordering", key=key, content_hash=key)
        for repeat in (1, 0):
            Attempt.objects.create(submission=submission, scenario=scenario, repeat=repeat)
    assert [(a.scenario.key, a.repeat) for a in submission_attempts(submission)] == [
        ("level_1", 0), ("level_1", 1), ("level_2", 0), ("level_2", 1), ("level_10", 0), ("level_10", 1)]
