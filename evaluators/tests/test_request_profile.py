"""The request profile: how a submission's requests may differ from the official ones, checked where
settings come in, frozen with the submission and labelled as a variant."""
from __future__ import annotations

import json

import pytest

from evaluators.endpoints.profile import MAX_EXTRA_BODY_BYTES, RequestProfile, fixing_setting, profile_of
from evaluators.settings import EvaluationSettings, SettingsError

REASONING = {"token_limit_parameter": "max_completion_tokens",
             "omit_parameters": "temperature,top_p,frequency_penalty",
             "extra_body": '{"reasoning_effort": "low"}'}


def _settings(**values: object) -> EvaluationSettings:
    return EvaluationSettings.from_mapping(values, "sokoban", "online")


def test_the_default_profile_sends_the_official_request_keys() -> None:
    body = profile_of(_settings()).body(temperature=0.1, max_tokens=300, top_p=0.95, frequency_penalty=1.0)
    assert body == {"temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0, "max_tokens": 300}
    assert _settings().variant_names() == []


def test_a_reasoning_profile_renames_the_limit_leaves_out_sampling_and_merges_the_extra_body() -> None:
    settings = _settings(**REASONING)
    body = profile_of(settings).body(temperature=0.1, max_tokens=300, top_p=0.95, frequency_penalty=1.0)
    assert body == {"max_completion_tokens": 300, "reasoning_effort": "low"}


def test_a_profile_makes_the_run_a_labelled_variant_and_is_frozen_with_it() -> None:
    settings = _settings(**REASONING)
    assert settings.variant_names() == ["extra_body", "omit_parameters", "token_limit_parameter"]
    stored = settings.to_dict()
    assert stored["extra_body"] == {"reasoning_effort": "low"}
    assert stored["omit_parameters"] == "temperature,top_p,frequency_penalty"
    again = EvaluationSettings.from_mapping(stored, "sokoban", "online", platform=True)
    assert profile_of(again) == profile_of(settings)


def test_omitted_parameters_are_read_from_text_or_a_list_in_one_order() -> None:
    assert _settings(omit_parameters=" top_p , temperature").omit_parameters == "temperature,top_p"
    assert _settings(omit_parameters=["frequency_penalty", "top_p"]).omit_parameters == "top_p,frequency_penalty"


@pytest.mark.parametrize("values, said", [
    ({"token_limit_parameter": "max_new_tokens"},
     "token_limit_parameter must be one of max_tokens, max_completion_tokens"),
    ({"omit_parameters": "temperature,seed"}, "'seed' cannot be left out"),
    ({"extra_body": "{not json"}, "extra_body must be a JSON object"),
    ({"extra_body": "[1, 2]"}, "extra_body must be a JSON object"),
    ({"extra_body": '{"model": "other"}'}, "extra_body cannot set model"),
    ({"extra_body": '{"messages": [], "max_tokens": 5}'}, "extra_body cannot set max_tokens, messages"),
    ({"extra_body": '{"stream": true}'}, "extra_body cannot set stream"),
    ({"extra_body": '{"n": 4}'}, "extra_body cannot set n"),
    ({"extra_body": json.dumps({"pad": "x" * MAX_EXTRA_BODY_BYTES})}, f"larger than {MAX_EXTRA_BODY_BYTES} bytes"),
    ({"extra_body": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}}}, "nests deeper than 8"),
    ({"extra_body": '{"x": NaN}'}, "JSON values only"),
])
def test_a_profile_value_that_cannot_be_sent_is_refused_with_its_name(values: dict[str, object], said: str) -> None:
    with pytest.raises(SettingsError) as caught:
        _settings(**values)
    assert said in str(caught.value)


def test_the_setting_that_fixes_a_refusal_is_found_by_param_or_by_message() -> None:
    assert fixing_setting("max_tokens", "") == "token_limit_parameter=max_completion_tokens"
    assert fixing_setting(None, "Use 'max_completion_tokens' instead of 'max_tokens'") == (
        "token_limit_parameter=max_completion_tokens")
    assert fixing_setting("top_p", "") == "omit_parameters=top_p"
    assert fixing_setting("", "Unsupported value: 'temperature' does not support 0.1") == "omit_parameters=temperature"
    assert fixing_setting("", "This model's maximum context length is 4096 tokens") is None
    assert fixing_setting("", "Invalid content type. image_url is only supported by certain models.") == (
        "observation_images=false")


def test_the_extra_body_is_copied_so_a_caller_cannot_change_a_frozen_profile() -> None:
    raw = {"reasoning_effort": "low"}
    settings = _settings(extra_body=raw)
    raw["reasoning_effort"] = "high"
    assert profile_of(settings).extra_body == {"reasoning_effort": "low"}
    assert RequestProfile().body(temperature=1.0, max_tokens=1, top_p=None, frequency_penalty=None) == {
        "temperature": 1.0, "max_tokens": 1}
