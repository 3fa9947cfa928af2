"""The page across environments says, under each board's cost chart, whether that chart's cost axis is
logarithmic or linear: the axis is fitted to each board's costs, so the page cannot say it once for all."""
from __future__ import annotations

import re

import pytest

from leaderboard.tests.test_cost_in_browser import _seed


def _axis_note(html: str, section_id: str) -> str:
    section = html.split(f'id="{section_id}"', 1)[1].split("</section>", 1)[0]
    note = re.search(r'<p class="hint cost-axis-note">(.*?)</p>', section, re.S)
    assert note is not None
    return " ".join(note.group(1).split())


@pytest.mark.django_db
def test_each_chart_says_whether_its_cost_axis_is_logarithmic_or_linear(client, fixture_scenarios):
    # Sokoban: 2 100 and 21 000 tokens per scenario, ten times apart (log); WebUI: 3 300 and 3 600 (linear).
    _seed("Cheap model", 2_000, 100, lambda i, r: 20.0 + i + r, None)
    _seed("Strong model", 20_000, 1_000, lambda i, r: 70.0 + i + r, None)
    _seed("Web model", 3_000, 300, lambda i, r: 80.0 + i, None, env="webui")
    _seed("Other web model", 3_300, 300, lambda i, r: 40.0 + i, None, env="webui")
    html = client.get("/cost/?subset=mini&x=tokens").content.decode()
    assert "the cost axes are logarithmic" not in html
    assert _axis_note(html, "cost-sokoban-global").startswith("Cost axis: logarithmic")
    assert _axis_note(html, "cost-webui-global").startswith("Cost axis: linear")
