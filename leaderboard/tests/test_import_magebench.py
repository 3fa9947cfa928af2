"""Importing a MageBench resources/ directory: counts, idempotence, verification, clear errors."""
from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from catalogue.models import Scenario
from conftest import FIXTURE_RESOURCES

pytestmark = pytest.mark.django_db


def _import(path, *args: str) -> str:
    out = StringIO()
    # Running the WebUI pages is tested in evaluators/tests/test_webui_page_check.py.
    call_command("import_magebench", str(path), "--no-page-check", *args, stdout=out)
    return out.getvalue()


def _copy(tmp_path):
    target = tmp_path / "MageBench" / "resources"
    shutil.copytree(FIXTURE_RESOURCES, target)
    return target


def test_it_imports_every_level_with_its_subsets_tags_and_upper_bound(tmp_path):
    out = _import(_copy(tmp_path).parent, "--suite", "fixture")  # a checkout root works too
    listed = json.loads((FIXTURE_RESOURCES / "Sokoban_all.json").read_text())
    mini = json.loads((FIXTURE_RESOURCES / "Sokoban_mini.json").read_text())
    assert f"sokoban: {len(listed)} created, 0 updated, 0 unchanged ({len(mini)} in mini)" in out
    assert "warning" not in out  # the solver agrees with every fixture upper bound
    scenarios = Scenario.objects.filter(suite="fixture", environment_id="sokoban")
    assert scenarios.count() == len(listed) and scenarios.filter(in_mini=True).count() == len(mini)
    level = scenarios.get(key="1-Sokoban-small-v0")
    assert level.tags["variant"] == "small-v0" and level.tags["boxes"] == level.data["num_boxes"]
    bound = json.loads((FIXTURE_RESOURCES / "Sokoban" / "upper_bound.json").read_text())["1-Sokoban-small-v0"]
    assert level.data["upper_bound"]["reward"] == bound["reward"]
    assert level.data["grid"] == (FIXTURE_RESOURCES / "Sokoban" / "1-Sokoban-small-v0.txt").read_text().rstrip("\n")


def test_it_imports_webui_pages_with_their_folders_and_action_names(tmp_path):
    from django.conf import settings

    out = _import(_copy(tmp_path), "--suite", "fixture", "--no-verify")
    pages = json.loads((FIXTURE_RESOURCES / "WebUI_all.json").read_text())
    assert f"webui: {len(pages)} created, 0 updated, 0 unchanged (3 in mini)" in out
    page = Scenario.objects.get(environment_id="webui", key="任务清单")
    assert page.data["actions"] == ["add_task", "complete_first_task", "delete_second_task"]
    stored = settings.SCENARIO_ROOT / page.resource_path
    assert (stored / "index.html").is_file() and (stored / "actions.py").is_file()
    assert Scenario.objects.get(environment_id="webui", key="pricing plans").in_mini


def test_it_refuses_a_webui_page_without_its_index(tmp_path):
    resources = _copy(tmp_path)
    (resources / "WebUI" / "step-counter" / "index.html").unlink()
    with pytest.raises(CommandError, match="step-counter \\(no index.html\\)"):
        _import(resources)
    assert not Scenario.objects.exists()


def test_importing_twice_changes_nothing(tmp_path):
    resources = _copy(tmp_path)
    _import(resources, "--no-verify")
    hashes = dict(Scenario.objects.values_list("key", "content_hash"))
    out = _import(resources, "--no-verify")
    assert " 0 created, 0 updated, 31 unchanged" in out
    assert dict(Scenario.objects.values_list("key", "content_hash")) == hashes


def test_it_reports_an_upper_bound_that_disagrees_with_the_optimal_solution(tmp_path):
    resources = _copy(tmp_path)
    bounds_file = resources / "Sokoban" / "upper_bound.json"
    bounds = json.loads(bounds_file.read_text())
    bounds["1-Sokoban-small-v0"]["reward"] = 5.0
    bounds_file.write_text(json.dumps(bounds))
    out = _import(resources)
    assert "1-Sokoban-small-v0: upper_bound.json says R_ub = 5.0 but the optimal solution gives" in out
    assert Scenario.objects.get(key="1-Sokoban-small-v0").data["upper_bound"]["reward"] == 5.0  # official kept


def test_it_refuses_a_directory_that_is_not_a_magebench_checkout(tmp_path):
    with pytest.raises(CommandError, match="no \\*_all.json"):
        _import(tmp_path)
    with pytest.raises(CommandError, match="is not a directory"):
        _import(tmp_path / "missing")


def test_it_refuses_a_partial_directory_and_stores_nothing(tmp_path):
    resources = _copy(tmp_path)
    (resources / "Sokoban" / "2-Sokoban-small-v0.pkl").unlink()
    with pytest.raises(CommandError, match="have no .pkl.*2-Sokoban-small-v0"):
        _import(resources)
    assert not Scenario.objects.exists()


def test_it_refuses_a_malformed_list_file(tmp_path):
    resources = _copy(tmp_path)
    (resources / "Sokoban_all.json").write_text('{"not": "a list"}')
    with pytest.raises(CommandError, match="must be a JSON list"):
        _import(resources)
