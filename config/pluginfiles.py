"""Templates and static files that an environment's package keeps in its own folder.

An environment's replay panel is its own: the template under ``<package>/templates/`` and the
scripts under ``<package>/static/``, found through the registry, so that adding an environment
touches nothing outside its folder. Only the configured environments' folders are searched.
"""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder, FileSystemFinder
from django.core.checks import CheckMessage
from django.core.files.storage import FileSystemStorage
from django.template.loaders.filesystem import Loader as FilesystemLoader

from evaluators.base import all_plugins


def plugin_folders(name: str) -> list[Path]:
    """Every configured environment's ``name`` folder (templates, static) that exists."""
    folders = (Path(inspect.getfile(type(plugin))).parent / name for plugin in all_plugins())
    return [folder for folder in folders if folder.is_dir()]


class PluginTemplateLoader(FilesystemLoader):
    """Finds templates in the environments' ``templates/`` folders."""

    def get_dirs(self) -> list[Path]:  # type: ignore[override]
        return plugin_folders("templates")


class PluginStaticFinder(FileSystemFinder):
    """Finds static files in the environments' ``static/`` folders, published at the static root."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # STATICFILES_DIRS is FileSystemFinder's own list; this one searches only the plug-ins' folders.
        BaseFinder.__init__(self, *args, **kwargs)
        self.locations: list[tuple[str, str]] = []
        self.storages: dict[str, FileSystemStorage] = {}
        for folder in plugin_folders("static"):
            root = str(folder)
            self.locations.append(("", root))
            storage = FileSystemStorage(location=root)
            storage.prefix = ""  # type: ignore[attr-defined]
            self.storages[root] = storage

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        return []
