"""What one environment knows stays in its folder: no shared file names Football's pitch zones,
WebUI's code files and fences, or WebUI's lost-score components; the shared code reads them from the
plug-ins' declarations (analysis_panels, code_files, upload_code_fences, upload_code_schema,
breakdown_parts)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WORDS: dict[str, re.Pattern[str]] = {
    "Football's pitch zones": re.compile(r"pitch|\bzones?\b|\blanes?\b|\b(own|attacking) third\b", re.IGNORECASE),
    "WebUI's code files": re.compile(
        r"```(html|css|js|javascript)\b|\bindex\.html\b|\bstyle\.css\b|\bscript\.js\b|[\"'](html|css|js)[\"']\s*:",
        re.IGNORECASE),
    "WebUI's lost score": re.compile(
        r"\.seg\.(parse|render|interaction|unmatched|attribute)\b"
        r"|\b(interaction|unmatched|attribute)s?\s*(loss|losses|mismatch(es)?)\b|failed interactions"
        r"|unmatched target|\b(parse|render|interaction|unmatched|attribute)\s*:\s*\"#", re.IGNORECASE),
}

#: Where a file may speak of one environment anyway: tests, migrations, fixtures, documentation,
#: vendored bundles and the benches that measure one environment each.
EXEMPT = re.compile(r"(^|/)(tests|migrations|fixtures|docs|vendor)/|^bench/|^README\.md$")

#: Shared files that still hold such knowledge, each with what has to happen before it can go.
#: An entry whose file no longer mentions any of the words fails the test: take it off the list.
KNOWN: dict[str, str] = {}


def _environment_folders() -> list[str]:
    return sorted(f"{path.parent.relative_to(ROOT).as_posix()}/" for path in ROOT.glob("evaluators/*/plugin.py"))


def _tracked() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in listed.decode().split("\0") if name]


def _mentions() -> dict[str, list[str]]:
    folders = _environment_folders()
    found: dict[str, list[str]] = {}
    for name in _tracked():
        path = ROOT / name
        if name.startswith(tuple(folders)) or EXEMPT.search(name) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # images, fonts, archives
        for number, line in enumerate(text.splitlines(), start=1):
            found.setdefault(name, []).extend(
                f"line {number}: {what}" for what, pattern in WORDS.items() if pattern.search(line))
    return {name: lines for name, lines in found.items() if lines}


def test_every_environment_with_a_plugin_has_its_own_folder() -> None:
    assert {"evaluators/football/", "evaluators/webui/"} <= set(_environment_folders())


def test_no_shared_file_names_one_environments_zones_code_files_or_lost_score() -> None:
    mentions = _mentions()
    assert {name: lines for name, lines in mentions.items() if name not in KNOWN} == {}
    assert sorted(name for name in KNOWN if name not in mentions) == [], "no longer mentions: take it off KNOWN"


@pytest.mark.parametrize("line", [
    "Football's 3×3 pitch-zone heatmap",
    "code = {'html': page}",
    "```css",
    ".seg.interaction { fill: #d9a21b; }",
    "lost to failed interactions",
])
def test_the_words_looked_for_are_found(line: str) -> None:
    assert any(pattern.search(line) for pattern in WORDS.values())


@pytest.mark.parametrize("line", ["TIME_ZONE = 'UTC'", "the model's reply is parsed", "a timezone-aware clock"])
def test_ordinary_words_are_not_taken_for_an_environments(line: str) -> None:
    assert not any(pattern.search(line) for pattern in WORDS.values())
