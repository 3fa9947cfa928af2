"""Evaluation settings: the plug-ins' defaults per flow, checked values, and the stored form."""
from __future__ import annotations

import pytest

from evaluators.base import get_plugin
from evaluators.football.options import FootballOptions
from evaluators.settings import EvaluationSettings, SettingsError, declared_defaults, validated_values
from evaluators.webui.options import WebUIOptions

REQUEST = {"temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0, "parse_retries": 0, "no_system_role": False}


@pytest.mark.parametrize("env, flow, expected", [
    ("sokoban", "global", {"resolution": 640, "max_image": 1, "repeats": 3, "max_tokens": 1000}),
    ("sokoban", "online", {"resolution": 640, "max_image": 1, "max_memory": 5, "max_loop": 50, "repeats": 3,
                           "max_tokens": 300}),
    ("webui", "global", {"resolution": 1920, "max_image": 10, "repeats": 3, "max_tokens": 4000,
                         "webui_exclude_unchanged": False, "webui_viewport_1080": False}),
    ("webui", "online", {"resolution": 1920, "max_image": 10, "max_loop": 4, "repeats": 3, "max_tokens": 4000,
                         "webui_exclude_unchanged": False, "webui_viewport_1080": False}),
    ("football", "online", {"resolution": 1280, "max_image": 1, "max_memory": 5, "max_loop": 400, "repeats": 10,
                            "max_tokens": 1000, "observation_images": True,
                            "football_shot_held_until_received": False}),
])
def test_each_plugin_declares_the_values_every_flow_runs_with(env, flow, expected):
    defaults = EvaluationSettings.defaults(env, flow)
    stored = defaults.to_dict()
    assert {name: stored[name] for name in expected} == expected
    assert {name: stored[name] for name in REQUEST} == REQUEST
    assert stored["prompt_version"] == get_plugin(env).prompts(flow).version


def test_the_stored_form_holds_the_declared_names_and_nothing_the_flow_does_not_declare():
    assert set(EvaluationSettings.defaults("sokoban", "global").to_dict()) == {
        *REQUEST, "resolution", "max_image", "repeats", "max_tokens", "prompt_version"}
    assert "max_memory" not in EvaluationSettings.defaults("webui", "online").to_dict()


def test_names_a_plugin_leaves_out_keep_the_platforms_built_in_behaviour():
    sokoban = EvaluationSettings.defaults("sokoban", "global")
    assert sokoban.observation_images is True and sokoban.trace is True
    assert sokoban.seed is None and sokoban.options == {} and not WebUIOptions.of(sokoban).exclude_unchanged
    assert FootballOptions.of(EvaluationSettings.defaults("football", "online")).auto_render is True


def test_a_plugins_own_settings_are_stored_flat_beside_the_platforms_and_read_through_its_accessor():
    settings = EvaluationSettings.from_mapping({"auto_render": "false"}, "football", "online")
    assert settings.options == {"auto_render": False, "football_shot_held_until_received": False}
    assert list(settings.to_dict())[-3:] == ["auto_render", "football_shot_held_until_received", "prompt_version"]
    assert FootballOptions.of(settings).auto_render is False


def test_another_environments_own_setting_is_refused_with_the_names_this_one_accepts():
    with pytest.raises(SettingsError, match="unknown setting 'auto_render'; the settings are extra_body, "
                                            "frequency_penalty, max_image, max_loop, max_memory, max_tokens, "
                                            "no_system_role"):
        EvaluationSettings.from_mapping({"auto_render": False}, "webui", "online")


def test_football_runs_ten_repeats_on_the_mini_set_and_three_on_the_full_set():
    assert EvaluationSettings.defaults("football", "online", subset="mini").repeats == 10
    assert EvaluationSettings.defaults("football", "online", subset="full").repeats == 3


def test_the_metric_card_lists_a_value_given_per_subset_as_it_is_declared():
    shown = declared_defaults(get_plugin("football"), "online")
    assert shown["repeats"] == {"mini": 10, "full": 3} and "prompt_version" not in shown
    assert shown["temperature"] == 0.1


def test_submitted_values_are_read_by_type_and_recorded_with_the_defaults():
    settings = EvaluationSettings.from_mapping({"repeats": "2", "temperature": "0.5", "observation_images": "false",
                                                "max_tokens": None, "resolution": ""}, "sokoban", "online")
    assert (settings.repeats, settings.temperature, settings.observation_images) == (2, 0.5, False)
    assert settings.max_tokens == 300 and settings.resolution == 640
    assert settings.to_dict()["observation_images"] is False


@pytest.mark.parametrize("raw, message", [
    ({"observation_images": "maybe"}, "observation_images must be true or false"),
    ({"max_loop": "many"}, "max_loop must be a whole number, not 'many'"),
    ({"repeats": True}, "repeats must be a number"),
    ({"temperature": "hot"}, "temperature must be a number"),
    ({"max_loop": 0}, "max_loop must be between 1 and 1000"),
    ({"frequency_penalty": 3}, r"frequency_penalty must be between -2\.0 and 2\.0"),
    ({"warp_speed": 9},
     "unknown setting 'warp_speed'; the settings are extra_body, frequency_penalty, max_image, max_loop"),
    ({"seed": 3}, "unknown setting 'seed'"),
    ({"prompt_version": "mine"}, "unknown setting 'prompt_version'"),
])
def test_a_bad_value_is_refused_with_its_name(raw, message):
    with pytest.raises(SettingsError, match=message):
        EvaluationSettings.from_mapping(raw, "sokoban", "online")


def test_an_unknown_flow_is_refused_with_the_environments_name():
    with pytest.raises(SettingsError, match="Football has no flow 'global'"):
        EvaluationSettings.from_mapping({}, "football", "global")


def test_the_stored_form_reads_back_to_the_same_settings():
    settings = EvaluationSettings.from_mapping({"repeats": 1, "parse_retries": 2, "webui_exclude_unchanged": "yes"},
                                               "webui", "online")
    again = EvaluationSettings.from_mapping(settings.to_dict(), "webui", "online", platform=True)
    assert again == settings and again.to_dict() == settings.to_dict()


def test_a_stored_row_keeps_its_own_prompt_version_and_values_outside_todays_ranges():
    stored = {"repeats": 3, "prompt_version": "sokoban-online-v1", "resolution": 32, "max_loop": 2000}
    settings = EvaluationSettings.from_mapping(stored, "sokoban", "online", platform=True)
    assert (settings.prompt_version, settings.resolution, settings.max_loop) == ("sokoban-online-v1", 32, 2000)


def test_a_row_stored_before_a_setting_existed_reads_with_the_plugins_default():
    old = {"resolution": 640, "max_image": 1, "repeats": 3, "temperature": 0.1, "max_tokens": 1000,
           "prompt_version": "sokoban-global-v1"}
    settings = EvaluationSettings.from_mapping(old, "sokoban", "global", platform=True)
    assert (settings.top_p, settings.frequency_penalty, settings.parse_retries) == (0.95, 1.0, 0)


def test_the_platform_may_set_its_own_names():
    settings = EvaluationSettings.from_mapping({"seed": "7", "trace": "false"}, "football", "online", platform=True)
    assert settings.seed == 7 and settings.trace is False and settings.to_dict()["seed"] == 7


def test_only_non_official_values_make_a_labelled_variant():
    assert EvaluationSettings.defaults("webui", "global").variant_names() == []
    variant = EvaluationSettings.from_mapping({"parse_retries": 1, "webui_exclude_unchanged": True}, "webui", "global")
    assert variant.variant_names() == ["parse_retries", "webui_exclude_unchanged"]


def test_the_settings_are_frozen():
    settings = EvaluationSettings.defaults("sokoban", "global")
    with pytest.raises(AttributeError):
        settings.repeats = 5  # type: ignore[misc]


def test_blank_values_are_left_out_of_the_checked_values():
    assert validated_values({"webui_exclude_unchanged": "true", "repeats": "", "max_loop": None}) == {
        "webui_exclude_unchanged": True}
