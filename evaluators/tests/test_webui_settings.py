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
