"""The quick test of a JSONL line is never looser than the published schema, and spares the schema's
validator every line that plainly meets it."""
from __future__ import annotations

from typing import Any

import pytest

from conftest import ROOT
from submissions.tests.test_uploads import jsonl, sokoban
from submissions.uploads import jsonl as jsonl_format
from submissions.uploads.json_values import loads
from submissions.uploads.line_shape import plainly_valid

BASE = {"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["### Actions\nUp"]}
VARIANTS: list[dict[str, Any]] = [
    BASE,
    {**BASE, "score": 1.5, "error": "", "meta": {"model": "m"}},
    {**BASE, "score": 3},
    {**BASE, "repeat": 1.0},
    {**BASE, "repeat": True},
    {**BASE, "repeat": -1},
    {**BASE, "scenario": ""},
    {**BASE, "scenario": 5},
    {**BASE, "replies": []},
    {**BASE, "replies": ["a", 5]},
    {**BASE, "score": True},
    {**BASE, "score": "1"},
    {**BASE, "error": None},
    {**BASE, "meta": []},
    {**BASE, "extra": 1},
    {**BASE, "actions": ["Up"]},
    {"scenario": "s", "repeat": 0},
    {"scenario": "s", "repeat": 0, "actions": ["Up", "Down"]},
    {"scenario": "s", "repeat": 0, "actions": []},
    {"scenario": "s", "repeat": 0, "actions": [""]},
    {"scenario": "s", "repeat": 0, "actions": ["Up,Down"]},
    {"scenario": "s", "repeat": 0, "actions": ["Up\n"]},
    {"scenario": "s", "repeat": 0, "actions": ["x" * 100]},
    {"scenario": "s", "repeat": 0, "actions": ["x" * 101]},
    {"scenario": "s", "repeat": 0, "code": {"html": "<p></p>"}},
    {"scenario": "s", "repeat": 0, "code": {}},
    {"scenario": "s", "repeat": 0, "code": {"html": 1}},
    {"scenario": "s", "repeat": 0, "code": "<p></p>"},
]
EXAMPLES = [loads(line) for path in sorted((ROOT / "fixtures" / "uploads").glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("value", VARIANTS + EXAMPLES)
def test_a_line_the_quick_test_passes_meets_the_schema(value: dict[str, Any]) -> None:
    errors = list(jsonl_format._validator().iter_errors(value))
    assert not (plainly_valid(value) and errors), errors


def test_the_examples_and_plain_lines_pass_the_quick_test() -> None:
    assert all(plainly_valid(value) for value in EXAMPLES)
    assert plainly_valid(BASE) and plainly_valid(VARIANTS[1])


def test_a_plainly_valid_line_is_not_given_to_the_schemas_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    class Unused:
        def iter_errors(self, value: Any) -> Any:
            raise AssertionError(f"the schema's validator was asked about {value}")

    monkeypatch.setattr(jsonl_format, "_validator", Unused)
    runs = sokoban(jsonl(BASE, {**BASE, "repeat": 1, "score": 2.0}))
    assert [run.repeat for run in runs] == [0, 1]
