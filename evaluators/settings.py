"""A submission's evaluation settings: one frozen, typed value, checked once where it comes in.

Settings come from a submitter (the site's form, the REST API and the command-line client through
it, the operators' commands), from an upload, or from a stored submission. Every way in goes
through :meth:`EvaluationSettings.from_mapping`, which starts from the plug-in's defaults for the
flow (declared in one place, the plug-in's ``default_settings``) and applies the values given.
Flows, episodes, re-scoring and the boards read attributes.

:meth:`EvaluationSettings.to_dict` is the stored form: the names every run records (the official
request settings and the prompt version), the ones the plug-in declares for the flow and the ones
the submitter set. A submission page shows exactly what was frozen, and the names left out keep
the platform's built-in behaviour.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evaluators.declarations import OptionValue, SettingOption
from evaluators.endpoints.profile import (
    TOKEN_LIMIT_PARAMETERS,
    ProfileError,
    read_extra_body,
    read_omit_parameters,
)
from evaluators.registry import all_plugins, get_plugin

if TYPE_CHECKING:
    # The plug-in interface names these settings in its signatures, so this module names it for typing only.
    from evaluators.interface import EnvironmentPlugin

#: A plug-in's default for one setting: a value, or a value per subset ({"mini": 10, "full": 3}).
DefaultValue = int | float | bool | str | Mapping[str, int]


#: Settings of every environment under which a submission is not scored the official way, with
#: the value that is; each plug-in adds its own (its ``setting_options`` declared ``variant``).
OFFICIAL_VALUES: dict[str, Any] = {"parse_retries": 0, "png_image_label": False,
                                   "token_limit_parameter": "max_tokens", "omit_parameters": "", "extra_body": {}}


def official_values() -> dict[str, Any]:
    """Every setting that makes a run a labelled variant, with its official value."""
    values = dict(OFFICIAL_VALUES)
    for plugin in all_plugins():
        values.update({name: option.default for name, option in plugin.setting_options.items() if option.variant})
    return values


def non_official_settings(settings: Mapping[str, Any]) -> list[str]:
    """The names of settings that make a run a labelled variant rather than the official protocol."""
    return sorted(name for name, value in official_values().items()
                  if name in settings and settings[name] not in (None, value))


class SettingsError(ValueError):
    """Settings that cannot be accepted, with a message naming the setting."""


@dataclass(frozen=True)
class _Rule:
    """How one setting is read: its type, its range, and whether submitters may set it."""

    kind: type
    low: float | None = None
    high: float | None = None
    #: Set by the platform itself (the prompt version, an engine seed for benches), never by a submitter.
    platform_only: bool = False
    #: The values a text setting may take (empty: any text).
    choices: tuple[str, ...] = ()
    #: Reads a value whose form is more than a type and a range (raises ValueError naming the setting).
    reader: Callable[[Any], Any] | None = None


def _rule(kind: type, low: float | None = None, high: float | None = None, *, platform_only: bool = False,
          choices: tuple[str, ...] = (), reader: Callable[[Any], Any] | None = None) -> dict[str, _Rule]:
    return {"rule": _Rule(kind, low, high, platform_only, choices, reader)}


@dataclass(frozen=True, kw_only=True)
class EvaluationSettings:
    """How every attempt of a submission is run and scored.

    The request settings default to the official runner's (main.py, unchanged by every experiment
    script); the per-environment ones (resolution, images, repeats, max_tokens, the Online budget)
    have no platform-wide value and come from the plug-in's declaration.
    """

    #: Sampling temperature of every request.
    temperature: float = field(default=0.1, metadata=_rule(float, 0.0, 2.0))
    #: Nucleus sampling of every request.
    top_p: float = field(default=0.95, metadata=_rule(float, 0.0, 1.0))
    #: Frequency penalty of every request.
    frequency_penalty: float = field(default=1.0, metadata=_rule(float, -2.0, 2.0))
    #: Further generations asked for within one decision when a reply has no valid action. 0 is the
    #: official protocol (Global: one generation; Online: the reply uses its turn and the next request
    #: carries the regenerate message); more is the paper's description and a labelled variant.
    parse_retries: int = field(default=0, metadata=_rule(int, 0, 5))
    #: The official ``--model_no_system`` variant: the rules become the first part of the first user message.
    no_system_role: bool = field(default=False, metadata=_rule(bool))
    #: The request profile (``evaluators.endpoints.profile``): the name the completion-token limit is
    #: sent under, the sampling parameters left out, and a JSON object merged into every body. The
    #: defaults are the official requests; reasoning models need the others.
    token_limit_parameter: str = field(default="max_tokens", metadata=_rule(str, choices=TOKEN_LIMIT_PARAMETERS))
    omit_parameters: str = field(default="", metadata=_rule(str, reader=read_omit_parameters))
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False,
                                          metadata=_rule(dict, reader=read_extra_body))
    #: Label every image's data URL with its real type (image/png). Officially PNG bytes go out
    #: labelled image/jpeg; a server that trusts the label may decode them differently.
    png_image_label: bool = field(default=False, metadata=_rule(bool))
    #: Size in pixels of the frames the model is shown.
    resolution: int = field(metadata=_rule(int, 64, 4096))
    #: Images a request may carry (Global), or keeps in the newest messages of its memory (Online);
    #: images past it become a short text.
    max_image: int = field(metadata=_rule(int, 0, 64))
    #: Online: the memory window is the last ``2·max_memory`` messages (0: all of them).
    max_memory: int = field(default=5, metadata=_rule(int, 0, 100))
    #: Online: model decisions per episode at most (WebUI: refinement rounds).
    max_loop: int = field(default=50, metadata=_rule(int, 1, 1000))
    #: Runs of each scenario.
    repeats: int = field(metadata=_rule(int, 1, 20))
    #: Completion tokens each request allows.
    max_tokens: int = field(metadata=_rule(int, 1, 65536))
    #: False declares an endpoint that reads no images: it gets the text alone and no frame is rendered.
    observation_images: bool = field(default=True, metadata=_rule(bool))
    #: The version of the prompts the flow sends, recorded so a submission keeps what its model saw.
    prompt_version: str = field(metadata=_rule(str, platform_only=True))
    #: The engine seed of an environment with a seeded engine, for benches and offline re-scoring;
    #: None draws one per episode.
    seed: int | None = field(default=None, metadata=_rule(int, platform_only=True))
    #: An environment that evaluates in a browser records a trace of the evaluation.
    trace: bool = field(default=True, metadata=_rule(bool, platform_only=True))
    #: The plug-in's own settings (``EnvironmentPlugin.setting_options``), every one of them, with
    #: its default where the run did not set it. Read through the plug-in folder's typed accessor.
    options: Mapping[str, OptionValue] = field(default_factory=dict, hash=False)
    #: The names frozen with a submission (see the module's docstring), in field order; the plug-in's
    #: own come just before ``prompt_version``, in their declared order, as they did when they were fields.
    recorded: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def defaults(cls, plugin: EnvironmentPlugin | str, flow: str, *, subset: str = "mini") -> EvaluationSettings:
        """The plug-in's settings for ``flow`` on ``subset``, checked by the rules submitters' values meet."""
        return _defaults(get_plugin(plugin) if isinstance(plugin, str) else plugin, flow, subset)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], plugin: EnvironmentPlugin | str, flow: str, *,
                     subset: str = "mini", platform: bool = False) -> EvaluationSettings:
        """The plug-in's defaults for ``flow`` on ``subset`` with the values in ``raw`` applied.

        Raises SettingsError naming the setting for an unknown name, a value of the wrong type or
        one out of range. ``platform`` is for values the platform sets itself: a stored submission,
        an upload's replay settings, the commands that score offline. It admits the platform-only
        names and skips the ranges, so that a stored row stays readable after a range is narrowed.
        """
        resolved = get_plugin(plugin) if isinstance(plugin, str) else plugin
        base = cls.defaults(resolved, flow, subset=subset)
        given = validated_values(raw, resolved, platform=platform)
        return _with(base, given, resolved)

    def with_prompt_version(self, version: str) -> EvaluationSettings:
        """These settings run with the prompt set ``version`` (a suite's, frozen with a submission)."""
        return dataclasses.replace(self, prompt_version=version)

    def to_dict(self) -> dict[str, Any]:
        """The stored form, read back by ``from_mapping(..., platform=True)``."""
        return {name: self.options[name] if name in self.options else getattr(self, name) for name in self.recorded}

    def variant_names(self) -> list[str]:
        """The settings that make a run a labelled variant rather than the official protocol."""
        return non_official_settings({**{name: getattr(self, name) for name in _RULES}, **self.options})


#: The names every run records: the official request settings and the prompt version.
ALWAYS_RECORDED = ("temperature", "top_p", "frequency_penalty", "parse_retries", "no_system_role", "prompt_version")

_RULES: dict[str, _Rule] = {f.name: f.metadata["rule"] for f in dataclasses.fields(EvaluationSettings)
                            if "rule" in f.metadata}
_ORDER = {name: index for index, name in enumerate(_RULES)}
#: What a submitter may set in every environment.
SUBMITTED_NAMES = tuple(sorted(name for name, rule in _RULES.items() if not rule.platform_only))


def _option_rule(option: SettingOption) -> _Rule:
    return _Rule(option.kind, option.low, option.high, option.platform_only, option.choices)


def _rules_of(plugin: EnvironmentPlugin | None) -> dict[str, _Rule]:
    # Without a plug-in (a value checked before its environment is known), any plug-in's own
    # setting is a name; from_mapping checks the values again against the environment's.
    plugins = all_plugins() if plugin is None else [plugin]
    options = {name: _option_rule(option) for each in plugins for name, option in each.setting_options.items()}
    return {**_RULES, **options}


def setting_range(name: str) -> tuple[float, float]:
    """The values a submitter may give ``name`` (for forms that check them as they are typed)."""
    rule = _RULES[name]
    if rule.low is None or rule.high is None:
        raise KeyError(f"{name} has no range")
    return (rule.low, rule.high) if rule.kind is float else (int(rule.low), int(rule.high))


def validated_values(raw: Mapping[str, Any], plugin: EnvironmentPlugin | None = None, *,
                     platform: bool = False) -> dict[str, Any]:
    """The values in ``raw`` read by their rules (the platform's and ``plugin``'s own; every plug-in's
    when None); blank ones (None, "") are left out."""
    rules = _rules_of(plugin)
    clean: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None or (isinstance(value, str) and value == ""):
            continue
        rule = rules.get(name)
        if rule is None or (rule.platform_only and not platform):
            names = sorted(known for known, each in rules.items() if not each.platform_only)
            raise SettingsError(f"unknown setting {name!r}; the settings are {', '.join(names)}")
        clean[name] = _read(name, value, rule, ranges=not platform)
    return clean


def _read(name: str, value: Any, rule: _Rule, *, ranges: bool) -> Any:
    if rule.reader is not None:
        try:
            return rule.reader(value)
        except ProfileError as exc:
            raise SettingsError(str(exc)) from None
    if rule.kind is bool:
        return _boolean(name, value)
    if rule.kind is str:
        text = str(value)
        if rule.choices and text not in rule.choices:
            raise SettingsError(f"{name} must be one of {', '.join(rule.choices)}, not {text!r}")
        return text
    cast = _number(name, value, rule.kind)
    if ranges and rule.low is not None and rule.high is not None and not rule.low <= cast <= rule.high:
        low, high = (rule.low, rule.high) if rule.kind is float else (int(rule.low), int(rule.high))
        raise SettingsError(f"{name} must be between {low} and {high}")
    return cast


def _number(name: str, value: Any, kind: type) -> Any:
    if isinstance(value, bool):
        raise SettingsError(f"{name} must be a number")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be {'a whole number' if kind is int else 'a number'}, "
                            f"not {value!r}") from None


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _boolean(name: str, value: Any) -> bool:
    # The spellings of config.env.parse_bool; evaluators/ stays free of Django.
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise SettingsError(f"{name} must be true or false")


@functools.lru_cache(maxsize=64)
def _defaults(plugin: EnvironmentPlugin, flow: str, subset: str) -> EvaluationSettings:
    # Cached: a board reads the settings of every entry it lists.
    try:
        declared = plugin.default_settings[flow]
    except KeyError:
        raise SettingsError(f"{plugin.title} has no flow {flow!r}") from None
    values = validated_values({name: _for_subset(value, subset) for name, value in declared.items()}, plugin)
    values["prompt_version"] = plugin.prompts(flow).version
    own = {name: option.default for name, option in plugin.setting_options.items()}
    core = {name: value for name, value in values.items() if name not in own}
    bare = EvaluationSettings(**core, options=own, recorded=_in_field_order(ALWAYS_RECORDED, plugin))
    return _with(bare, values, plugin)


def _with(base: EvaluationSettings, given: Mapping[str, Any], plugin: EnvironmentPlugin) -> EvaluationSettings:
    """``base`` with the checked values in ``given`` applied, each recorded."""
    own = {name: value for name, value in given.items() if name in plugin.setting_options}
    core = {name: value for name, value in given.items() if name not in own}
    return dataclasses.replace(base, **core, options={**base.options, **own},
                               recorded=_in_field_order(base.recorded + tuple(given), plugin))


def _for_subset(value: DefaultValue, subset: str) -> Any:
    if isinstance(value, Mapping):
        try:
            return value[subset]
        except KeyError:
            raise SettingsError(f"no default for the {subset} subset") from None
    return value


def _in_field_order(names: tuple[str, ...], plugin: EnvironmentPlugin) -> tuple[str, ...]:
    declared = list(plugin.setting_options)

    def position(name: str) -> tuple[float, int]:
        if name in _ORDER:
            return _ORDER[name], 0
        return _ORDER["prompt_version"] - 0.5, declared.index(name)

    return tuple(sorted(set(names), key=position))


def declared_defaults(plugin: EnvironmentPlugin, flow: str) -> dict[str, Any]:
    """The defaults of ``flow`` as the metric card lists them: a value given per subset stays so."""
    shown = EvaluationSettings.defaults(plugin, flow).to_dict()
    shown.pop("prompt_version")
    for name, value in plugin.default_settings[flow].items():
        if isinstance(value, Mapping):
            shown[name] = dict(value)
    return shown
