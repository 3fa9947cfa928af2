"""The environment registry: plug-ins come from the MAGEBENCH_ENVIRONMENTS setting and nowhere else."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from django.core.exceptions import ImproperlyConfigured
from rest_framework.serializers import ChoiceField

from catalogue.apps import load_environments
from evaluators import base, registry
from evaluators.base import PluginConfigurationError, all_plugins, default_environments, environment_slugs, get_plugin

BUILT_IN = ["evaluators.football", "evaluators.sokoban", "evaluators.webui"]
TINY = "evaluators.tests.plugin_fixture"


def test_the_registry_holds_the_environments_the_setting_names(settings) -> None:
    assert [plugin.slug for plugin in all_plugins()] == sorted(
        base.plugin_from_module(path).slug for path in settings.MAGEBENCH_ENVIRONMENTS)

    settings.MAGEBENCH_ENVIRONMENTS = [*BUILT_IN, TINY]
    assert get_plugin("tiny").title == "Tiny"
    assert environment_slugs() == ["football", "sokoban", "tiny", "webui"]

    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.sokoban"]
    assert environment_slugs() == ["sokoban"]
    with pytest.raises(KeyError, match="unknown environment 'webui'"):
        get_plugin("webui")


def test_an_unknown_module_is_an_improperly_configured_error_and_keeps_the_registry() -> None:
    before = environment_slugs()
    with pytest.raises(ImproperlyConfigured, match="MAGEBENCH_ENVIRONMENTS: environment module 'evaluators.nowhere' "
                                                   "cannot be imported"):
        load_environments([*BUILT_IN, "evaluators.nowhere"])
    assert environment_slugs() == before


def test_a_module_without_a_plugin_is_refused() -> None:
    with pytest.raises(ImproperlyConfigured, match="'evaluators.paths' has no 'plugin'"):
        load_environments(["evaluators.paths"])


def test_an_environment_named_twice_is_refused() -> None:
    with pytest.raises(ImproperlyConfigured, match="sokoban named more than once"):
        load_environments(["evaluators.sokoban", "evaluators.sokoban"])


def test_a_registry_never_loaded_says_how_to_load_it(monkeypatch) -> None:
    monkeypatch.setattr(registry, "_loaded_once", False)
    with pytest.raises(PluginConfigurationError, match="load_plugins"):
        get_plugin("sokoban")


def test_the_apis_environment_choices_follow_the_registry(settings) -> None:
    from submissions.apis import ModelAndBoardInput

    assert set(cast(ChoiceField, ModelAndBoardInput().fields["env"]).choices) == set(BUILT_IN_SLUGS)
    settings.MAGEBENCH_ENVIRONMENTS = [*BUILT_IN, TINY]
    serializer = ModelAndBoardInput(data={"model_name": "m", "env": "tiny", "flow": "online", "subset": "mini"})
    assert serializer.is_valid(), serializer.errors
    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.sokoban"]
    serializer = ModelAndBoardInput(data={"model_name": "m", "env": "webui", "flow": "global", "subset": "mini"})
    assert not serializer.is_valid() and "env" in serializer.errors


def test_the_flows_a_submission_may_name_are_those_the_loaded_plugins_play(settings) -> None:
    from submissions.apis import ModelAndBoardInput
    from submissions.upload_apis import UploadCheckApi

    assert base.environment_flows() == ["global", "online"]
    assert cast(ChoiceField, ModelAndBoardInput().fields["flow"]).choices == {"global": "Global", "online": "Online"}
    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.football"]
    assert base.environment_flows() == ["online"]
    for serializer in (ModelAndBoardInput(data={"model_name": "m", "env": "football", "flow": "global",
                                                "subset": "mini"}),
                       UploadCheckApi.InputSerializer(data={"env": "football", "flow": "global", "subset": "mini"})):
        assert not serializer.is_valid()
        assert [str(error) for error in serializer.errors["flow"]] == ['"global" is not one of: online']


def test_a_stored_submissions_flow_is_checked_against_the_plugins_flows(settings) -> None:
    from django.core.exceptions import ValidationError

    from submissions.models import validate_flow

    validate_flow("global")
    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.football"]
    with pytest.raises(ValidationError, match="unknown flow 'global'; known: online"):
        validate_flow("global")


def test_the_api_schema_lists_the_loaded_plugins_flows(client, settings) -> None:
    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.football"]
    schemas = client.get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    assert schemas["FlowEnum"]["enum"] == ["online"]
    assert schemas["UploadCheckRequest"]["properties"]["flow"] == {"$ref": "#/components/schemas/FlowEnum"}


def test_an_environments_queue_is_its_kind_of_work_as_the_settings_route_it(settings) -> None:
    from submissions.selectors import queue_for, queue_work

    settings.MAGEBENCH_ENVIRONMENTS = [*BUILT_IN, TINY]
    assert queue_for("sokoban") == settings.CELERY_TASK_DEFAULT_QUEUE
    assert queue_for("tiny") == "engine"
    assert queue_work("engine") == "the Football engine"
    settings.MAGEBENCH_QUEUE_ROUTES = {"engine": "heavy"}
    assert queue_for("tiny") == queue_for("football") == "heavy"


def test_the_celery_queues_are_the_default_one_and_the_kinds_the_configured_plugins_declare(settings) -> None:
    assert [queue.name for queue in settings.CELERY_TASK_QUEUES] == [
        "light", *base.declared_queues(settings.MAGEBENCH_ENVIRONMENTS)]
    assert base.declared_queues(BUILT_IN) == ["browser", "engine"]
    assert base.declared_queues([*BUILT_IN, TINY]) == ["browser", "engine"]
    assert base.declared_queues(["evaluators.sokoban"]) == []


def test_the_settings_read_the_queues_from_the_environments_they_are_started_with() -> None:
    code = ("from django.conf import settings; "
            "print(','.join(queue.name for queue in settings.CELERY_TASK_QUEUES))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.base",
           "MAGEBENCH_ENVIRONMENTS": "evaluators.sokoban,evaluators.webui"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip() == "light,browser"


BUILT_IN_SLUGS = ["football", "sokoban", "webui"]


def test_the_default_environments_are_the_folders_that_define_a_plugin_except_the_opt_in_examples(
        tmp_path, monkeypatch) -> None:
    assert default_environments() == BUILT_IN
    # The examples are built in, and loaded only when named.
    examples = sorted(set(registry.built_in_environments()) - set(BUILT_IN))
    assert examples and all(base.plugin_from_module(path).opt_in for path in examples)

    zoo = tmp_path / "zoo"
    for name, source in {
        "": "",
        "tiny": "from evaluators.tests.plugin_fixture import TinyPlugin\nplugin = TinyPlugin()\n",
        "example": "from evaluators.tests.plugin_fixture import TinyPlugin\n"
                   "class Example(TinyPlugin):\n    opt_in = True\nplugin = Example()\n",
        # Never imported to find out: it defines no plug-in.
        "helpers": "raise RuntimeError('imported')\n",
    }.items():
        (zoo / name).mkdir(parents=True, exist_ok=True)
        (zoo / name / "__init__.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert registry.built_in_environments(zoo, "zoo") == ["zoo.example", "zoo.tiny"]
        assert default_environments(zoo, "zoo") == ["zoo.tiny"]
        # Importing it may have left its bytecode beside it: the folder goes as a whole.
        shutil.rmtree(zoo / "tiny")
        assert default_environments(zoo, "zoo") == []
    finally:
        for module in [name for name in sys.modules if name == "zoo" or name.startswith("zoo.")]:
            del sys.modules[module]
