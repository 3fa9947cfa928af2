"""plotly.js is served from the installed plotly package, under one static path only."""
from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

from config.staticfinders import PLOTLY_STATIC_PATH, PlotlyFinder


def test_the_finder_finds_plotly_min_js_in_the_plotly_package():
    found = Path(cast(str, PlotlyFinder().find(PLOTLY_STATIC_PATH)))
    assert found.name == "plotly.min.js" and found.parent.name == "package_data" and found.is_file()
    assert "plotly.js v" in found.read_text(encoding="utf-8")[:200]
    assert PlotlyFinder().find(PLOTLY_STATIC_PATH, find_all=True) == [str(found)]
    assert finders.find(PLOTLY_STATIC_PATH) == str(found)


@pytest.mark.parametrize("path", ["plotly.min.js", "vendor/widgetbundle.js", "vendor/datasets/iris.csv.gz",
                                  "vendor/../plotly.min.js", "vendor/plotly.min.js/..", "../plotly.min.js",
                                  "vendor//plotly.min.js", "VENDOR/plotly.min.js", "js/replay.js"])
def test_the_finder_refuses_every_other_path(path):
    assert PlotlyFinder().find(path) == [] and PlotlyFinder().find(path, find_all=True) == []


def test_the_finder_lists_only_plotly_under_the_vendor_prefix():
    listed = list(PlotlyFinder().list(None))
    assert [name for name, _ in listed] == ["plotly.min.js"]
    storage = listed[0][1]
    assert storage.prefix == "vendor" and Path(storage.path("plotly.min.js")).is_file()
    assert list(PlotlyFinder().list(["*.js"])) == []
    assert PlotlyFinder().check() == []


def test_collectstatic_copies_plotly_for_the_development_storage(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", "--noinput", verbosity=0)
    copied = settings.STATIC_ROOT / "vendor" / "plotly.min.js"
    assert copied.is_file() and copied.stat().st_size == Path(finders.find(PLOTLY_STATIC_PATH)).stat().st_size
    assert not (settings.STATIC_ROOT / "vendor" / "widgetbundle.js").exists()


def test_collectstatic_hashes_and_compresses_plotly_for_the_production_storage(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {**settings.STORAGES,
                         "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}
    call_command("collectstatic", "--noinput", verbosity=0)
    manifest = json.loads((settings.STATIC_ROOT / "staticfiles.json").read_text())
    hashed = manifest["paths"][PLOTLY_STATIC_PATH]
    assert hashed.startswith("vendor/plotly.min.") and hashed != PLOTLY_STATIC_PATH
    assert (settings.STATIC_ROOT / hashed).is_file() and (settings.STATIC_ROOT / f"{hashed}.gz").is_file()
