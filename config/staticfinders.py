"""Static files taken from installed Python packages instead of a CDN.

Replay pages must work on a closed network, so plotly.js is served from the copy the ``plotly``
package ships. Only that one file is exposed: the package directory holds much else (templates,
data sets, a widget bundle) that has no business under /static/.
"""
from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.contrib.staticfiles import utils
from django.contrib.staticfiles.finders import BaseFinder, searched_locations
from django.core.checks import CheckMessage
from django.core.checks import Warning as CheckWarning
from django.core.files.storage import FileSystemStorage

PLOTLY_PREFIX = "vendor"
PLOTLY_FILE = "plotly.min.js"
PLOTLY_STATIC_PATH = f"{PLOTLY_PREFIX}/{PLOTLY_FILE}"


def plotly_package_data() -> Path | None:
    # find_spec locates the package without importing it: importing plotly pulls in its whole graph API.
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        return None
    directory = Path(next(iter(spec.submodule_search_locations))) / "package_data"
    return directory if (directory / PLOTLY_FILE).is_file() else None


class PrefixedStorage(FileSystemStorage):
    """A package directory published under ``prefix``: collectstatic and WhiteNoise both honour it."""

    def __init__(self, location: Path, prefix: str) -> None:
        super().__init__(location=location)
        self.prefix = prefix


class PlotlyFinder(BaseFinder):
    """Finds ``vendor/plotly.min.js`` in the installed ``plotly`` package, and nothing else."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        directory = plotly_package_data()
        self.storage = PrefixedStorage(directory, PLOTLY_PREFIX) if directory is not None else None

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        if self.storage is not None:
            return []
        return [CheckWarning("The plotly package (with plotly.min.js) is not installed: replay charts cannot load.",
                             obj=self, id="magebench.W001")]

    # Like Django's own finders, a miss is [] whatever find_all says; the stubs' overloads say None.
    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> str | list[str]:  # type: ignore[override]
        if kwargs:
            # Django < 6.1 still passes the deprecated ``all`` keyword through here (a private
            # helper the stubs leave out).
            find_all = self._check_deprecated_find_param(find_all=find_all, **kwargs)  # type: ignore[attr-defined]
        match = self._match(path)
        if match is None:
            return []
        return [match] if find_all else match

    def list(self, ignore_patterns: Iterable[str] | None) -> Iterator[tuple[str, PrefixedStorage]]:
        if self.storage is None or utils.matches_patterns(PLOTLY_FILE, ignore_patterns or []):
            return
        yield PLOTLY_FILE, self.storage

    def _match(self, path: str) -> str | None:
        if self.storage is None:
            return None
        if self.storage.location not in searched_locations:
            searched_locations.append(self.storage.location)
        if path.replace(os.sep, "/") != PLOTLY_STATIC_PATH:
            return None
        return self.storage.path(PLOTLY_FILE)
