"""The charts' partial plotly.js bundles are the full bundle's version, with its stylesheet, so that the
Content-Security-Policy's hash of that stylesheet (config/security.py) lets them draw."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from config.security import _PLOTLY_STYLESHEET
from config.staticfinders import PLOTLY_FILE, plotly_package_data

VENDOR = Path(__file__).resolve().parents[2] / "static" / "vendor"


def _version(text: str) -> str:
    match = re.search(r"plotly\.js (?:\([a-z]+ - minified\) )?v(\d+\.\d+\.\d+)", text[:300])
    assert match, text[:300]
    return match.group(1)


@pytest.mark.parametrize("name", ["plotly-basic.min.js", "plotly-cartesian.min.js"])
def test_a_partial_bundle_is_the_full_bundles_version_with_its_stylesheet(name):
    directory = plotly_package_data()
    assert directory is not None
    full = (directory / PLOTLY_FILE).read_text(encoding="utf-8")
    partial = (VENDOR / name).read_text(encoding="utf-8")
    assert _version(partial) == _version(full)
    assert _PLOTLY_STYLESHEET.findall(partial) == _PLOTLY_STYLESHEET.findall(full) != []
    assert len(partial) < len(full) / 3
