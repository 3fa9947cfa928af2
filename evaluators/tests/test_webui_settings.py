"""The WebUI exclusion variant as a submission setting: accepted, off by default, labelled as a variant."""
from __future__ import annotations

from evaluators.runner import effective_settings
from evaluators.settings import validated_values
from evaluators.webui.options import WebUIOptions


def test_the_official_rule_is_the_default_of_both_flows():
    for flow in ("global", "online"):
        assert WebUIOptions.of(effective_settings("webui", flow)).exclude_unchanged is False


def test_a_submission_may_ask_for_the_exclusion_variant_which_marks_it_as_a_labelled_variant():
    asked = validated_values({"webui_exclude_unchanged": "true"})
    assert asked == {"webui_exclude_unchanged": True}
    assert effective_settings("webui", "global", asked).variant_names() == ["webui_exclude_unchanged"]
    assert effective_settings("webui", "global").variant_names() == []


def test_pages_run_on_the_virtual_clock_unless_a_run_asks_for_real_time_which_is_no_variant():
    for flow in ("global", "online"):
        assert WebUIOptions.of(effective_settings("webui", flow)).clock == "virtual"
    asked = validated_values({"webui_real_time": "true"})
    assert asked == {"webui_real_time": True}
    settings = effective_settings("webui", "global", asked)
    assert WebUIOptions.of(settings).clock == "real"
    # the same states and scores either way (test_webui_clock): not a labelled variant
    assert settings.variant_names() == []


def test_an_episode_renders_its_target_and_its_page_on_the_clock_its_settings_name(tmp_path):
    from evaluators.base import ScenarioSpec
    from evaluators.webui.env import WebUIEpisode

    (tmp_path / "index.html").write_text("<p>x</p>", encoding="utf-8")
    spec = ScenarioSpec(env="webui", key="p", data={}, resource_path=tmp_path)
    for asked, clock in (({}, "virtual"), ({"webui_real_time": True}, "real")):
        episode = WebUIEpisode(spec, effective_settings("webui", "global", asked))
        try:
            assert episode.clock == clock
        finally:
            episode.close()
