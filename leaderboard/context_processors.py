"""What every page's layout shows: the environments, for the navigation's metric links."""
from __future__ import annotations

from django.http import HttpRequest

from evaluators.base import EnvironmentPlugin, all_plugins


def environments(request: HttpRequest) -> dict[str, list[EnvironmentPlugin]]:
    return {"nav_environments": sorted(all_plugins(), key=lambda plugin: (plugin.position, plugin.slug))}
