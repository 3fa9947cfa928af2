"""The WebUI exclusion variant as a submission setting: accepted, off by default, labelled as a variant."""
from __future__ import annotations

from evaluators.agents.requests import non_official_settings
from evaluators.runner import effective_settings
from submissions.services import _validated_settings


def test_the_official_rule_is_the_default_of_both_flows():
    for flow in ("global", "online"):
        assert effective_settings("webui", flow)["webui_exclude_unchanged"] is False


def test_a_submission_may_ask_for_the_exclusion_variant_which_marks_it_as_a_labelled_variant():
    asked = _validated_settings({"webui_exclude_unchanged": "true"})
    assert asked == {"webui_exclude_unchanged": True}
    assert non_official_settings(effective_settings("webui", "global", asked)) == ["webui_exclude_unchanged"]
    assert non_official_settings(effective_settings("webui", "global")) == []
