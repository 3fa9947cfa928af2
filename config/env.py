"""12-factor settings helpers: every setting comes from the environment, strictly parsed."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, overload

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from evaluators.declarations import OperatorSetting, OptionValue

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def parse_bool(value: object) -> bool | None:
    """True or False for the usual spellings (1/0, true/false, yes/no, on/off), None for anything else."""
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None = None) -> str | None: ...
def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    parsed = parse_bool(value)
    # A typo such as DJANGO_DEBUG=Flase must not silently mean True.
    if parsed is not None:
        return parsed
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def _env_number(name: str, default: float, cast: type, what: str):
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        return cast(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be {what}, not {value!r}") from None


def env_int(name: str, default: int) -> int:
    return _env_number(name, default, int, "an integer")


def env_float(name: str, default: float) -> float:
    return _env_number(name, default, float, "a number")


def env_secret(name: str, default: str | None = None) -> str | None:
    """A secret from NAME, or from the file named by NAME_FILE (container secrets)."""
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        try:
            return Path(file_name).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name} cannot be read: {exc}") from None
    return env_str(name, default)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def operator_setting(setting: OperatorSetting, *, production: bool) -> OptionValue:
    """The value of an environment's operator setting (``evaluators.declarations.OperatorSetting``):
    its variable, read strictly as its kind, else its default (in production, its production default)."""
    default = setting.production_default if production and setting.production_default is not None \
        else setting.default
    if setting.kind is bool:
        return env_bool(setting.name, bool(default))
    if setting.kind is int:
        return env_int(setting.name, int(default))
    if setting.kind is float:
        return env_float(setting.name, float(default))
    return env_str(setting.name, str(default))
