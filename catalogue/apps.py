from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed


def load_environments(modules: Sequence[str] | None = None) -> None:
    """Load the environments' plug-ins: ``modules``, or the MAGEBENCH_ENVIRONMENTS setting."""
    from django.conf import settings

    from evaluators.base import PluginConfigurationError, load_plugins

    try:
        load_plugins(settings.MAGEBENCH_ENVIRONMENTS if modules is None else modules)
    except PluginConfigurationError as exc:
        raise ImproperlyConfigured(f"MAGEBENCH_ENVIRONMENTS: {exc}") from exc


def _environments_changed(*, setting: str, **kwargs: Any) -> None:
    # Tests that override the setting get the registry it names, and the old one back after.
    if setting == "MAGEBENCH_ENVIRONMENTS":
        load_environments()


class CatalogueConfig(AppConfig):
    name = "catalogue"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # evaluators/ reads no Django settings: the catalogue hands it the configured environments.
        load_environments()
        setting_changed.connect(_environments_changed)
