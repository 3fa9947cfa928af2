from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django import forms

from evaluators.base import all_plugins, environment_flows
from evaluators.endpoints.profile import (
    MAX_EXTRA_BODY_BYTES,
    OMITTABLE_PARAMETERS,
    TOKEN_LIMIT_PARAMETERS,
    ProfileError,
    read_extra_body,
)
from evaluators.settings import setting_range


def _plugins_in_order() -> list[Any]:
    return sorted(all_plugins(), key=lambda plugin: plugin.position)


def _env_choices() -> list[tuple[str, str]]:
    return [(p.slug, p.title) for p in _plugins_in_order()]


FLOW_TITLES = {"global": "Global", "online": "Online"}


def flow_choices() -> list[tuple[str, str]]:
    """The flows the loaded environments play, with their titles: the form's and the API's choices."""
    return [(flow, FLOW_TITLES.get(flow, flow)) for flow in environment_flows()]


def _titles(titles: Sequence[str]) -> str:
    return titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} and {titles[-1]}"


def _bounds(setting: str) -> dict[str, Any]:
    """A setting's range as a field's bounds, so the page points at the field the services would refuse."""
    low, high = setting_range(setting)
    return {"min_value": low, "max_value": high}


class _ModelAndBoardForm(forms.Form):
    """The team, the model's metadata and the board: what every submission names."""

    team = forms.ChoiceField(choices=())
    model_name = forms.CharField(max_length=120, label="Model name")
    organisation = forms.CharField(max_length=120, required=False)
    parameter_count = forms.IntegerField(required=False, min_value=1, label="Parameters",
                                         help_text="Total parameter count, e.g. 7000000000")
    open_weights = forms.BooleanField(required=False)
    link = forms.URLField(required=False, label="Paper or model card", assume_scheme="https")
    licence = forms.CharField(max_length=80, required=False)
    price_input_per_mtok = forms.FloatField(required=False, min_value=0, max_value=1_000_000,
                                            label="Price per million prompt tokens (USD)",
                                            help_text="Optional; with both prices the boards show what the runs cost")
    price_output_per_mtok = forms.FloatField(required=False, min_value=0, max_value=1_000_000,
                                             label="Price per million completion tokens (USD)")
    env = forms.ChoiceField(choices=_env_choices, label="Environment")
    flow = forms.ChoiceField(choices=flow_choices)
    subset = forms.ChoiceField(choices=[("mini", "mini"), ("full", "full")])
    public = forms.BooleanField(
        required=False, label="Show on the public boards",
        help_text="Left unticked, only your team sees the results until its owner publishes them.")

    def __init__(self, *args: Any, teams: Sequence[Any] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        team_field = self.fields["team"]
        assert isinstance(team_field, forms.ChoiceField)
        team_field.choices = [(str(team.id), team.name) for team in teams]
        # The flows each environment has, from its plug-in: the first environment and its first flow
        # are the initial pair (always a board that exists), and the page's script offers only the
        # chosen environment's flows (static/js/board_pair.js); clean() refuses any other pair.
        self.env_flows = {plugin.slug: list(plugin.flows) for plugin in _plugins_in_order()}
        if self.env_flows:
            first = next(iter(self.env_flows))
            self.fields["env"].initial = first
            self.fields["flow"].initial = self.env_flows[first][0]
        self.fields["subset"].initial = "mini"
        self.fields["env"].widget.attrs["data-flows"] = json.dumps(self.env_flows)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        env, flow = str(data.get("env") or ""), str(data.get("flow") or "")
        if env in self.env_flows and flow and flow not in self.env_flows[env]:
            title = dict(_env_choices()).get(env, env)
            offered = " and ".join(FLOW_TITLES.get(name, name) for name in self.env_flows[env])
            self.add_error("flow", f"{title} has no flow {FLOW_TITLES.get(flow, flow)}; it offers {offered}.")
        return data


class EndpointSubmissionForm(_ModelAndBoardForm):
    endpoint_url = forms.CharField(max_length=500, label="Endpoint URL",
                                   help_text="…/v1 or …/v1/chat/completions of an OpenAI-compatible server on a public "
                                             "address, without credentials (the key goes in the API key field)")
    endpoint_model = forms.CharField(max_length=200, required=False, label="Model id at the endpoint",
                                     help_text="Blank: the first model the endpoint lists at /models, as the official "
                                               "client does")
    api_key = forms.CharField(required=False, widget=forms.PasswordInput(render_value=False), label="API key",
                              help_text="Stored encrypted, never shown again")
    endpoint_concurrency = forms.IntegerField(
        required=False, min_value=1, label="Calls at once",
        help_text="At most this many attempts call your endpoint at the same time (blank: the platform's limit)")
    repeats = forms.IntegerField(required=False, **_bounds("repeats"))
    temperature = forms.FloatField(required=False, **_bounds("temperature"))
    max_tokens = forms.IntegerField(required=False, **_bounds("max_tokens"))
    no_system_role = forms.BooleanField(required=False, label="Model has no system role")
    text_only = forms.BooleanField(required=False, label="Model reads no images")
    # The request profile: reasoning models refuse the official requests (each is a labelled variant).
    token_limit_parameter = forms.ChoiceField(
        required=False, label="Token limit sent as", initial="max_tokens",
        choices=[(name, name) for name in TOKEN_LIMIT_PARAMETERS],
        help_text="max_tokens is the official request; OpenAI's reasoning models (o-series, GPT-5) take only "
                  "max_completion_tokens")
    omit_parameters = forms.MultipleChoiceField(
        required=False, label="Leave out of every request", widget=forms.CheckboxSelectMultiple,
        choices=[(name, name) for name in OMITTABLE_PARAMETERS],
        help_text="Parameters the model refuses; the official requests send all three")
    extra_body = forms.CharField(
        required=False, label="Extra request body (JSON)", max_length=MAX_EXTRA_BODY_BYTES,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": '{"reasoning_effort": "low"}'}),
        help_text="A JSON object merged into every request, e.g. reasoning_effort or vLLM's chat_template_kwargs; "
                  "it cannot set what the platform sets (model, messages, sampling, the token limit, streaming)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Built per form: the registry is the site's configured environments, loaded after import.
        where = [plugin for plugin in all_plugins() if plugin.text_only_runs]
        self.fields["text_only"].help_text = ("Observations are sent as text alone and no frame is rendered"
                                              + (f" ({_titles([p.title for p in where])})." if where else "."))

    def settings_values(self) -> dict[str, Any]:
        """The evaluation settings the form asks for, by their names (``text_only`` declares
        ``observation_images`` false); what is left blank keeps the plug-in's default."""
        data = self.cleaned_data
        values: dict[str, Any] = {name: data[name] for name in ("repeats", "temperature", "max_tokens")
                                  if data[name] is not None}
        if data["no_system_role"]:
            values["no_system_role"] = True
        if data["text_only"]:
            values["observation_images"] = False
        if data["token_limit_parameter"] and data["token_limit_parameter"] != "max_tokens":
            values["token_limit_parameter"] = data["token_limit_parameter"]
        if data["omit_parameters"]:
            values["omit_parameters"] = ",".join(data["omit_parameters"])
        if data["extra_body"]:
            values["extra_body"] = data["extra_body"]
        return values

    def clean_extra_body(self) -> str:
        text = str(self.cleaned_data.get("extra_body") or "").strip()
        if text:
            try:
                read_extra_body(text)
            except ProfileError as exc:
                raise forms.ValidationError(str(exc)) from None
        return text

    #: What a test call of the endpoint reads: the board, the endpoint and the settings, not the model's card.
    TEST_CALL_FIELDS = ("team", "env", "flow", "subset", "endpoint_url", "endpoint_model", "api_key", "repeats",
                        "temperature", "max_tokens", "no_system_role", "text_only", "token_limit_parameter",
                        "omit_parameters", "extra_body")

    def valid_for_test_call(self) -> bool:
        """Whether the fields a test call reads are valid. The model's fields may still be blank
        while a team tries its endpoint, so their errors are dropped rather than shown."""
        self.is_valid()
        for name in [name for name in self.errors if name not in self.TEST_CALL_FIELDS and name != "__all__"]:
            del self.errors[name]
        return not self.errors


class UploadSubmissionForm(_ModelAndBoardForm):
    file = forms.FileField(label="Outputs",
                           help_text="A zip of the MageBench output folder (<scenario>_r<k>/eval.json …) "
                                     "or a per-sample JSONL file")
