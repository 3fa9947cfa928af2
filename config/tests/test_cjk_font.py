"""Chinese and Japanese text renders as glyphs in the site's browser (scripts/setup installs
fonts-noto-cjk): WebUI scenario names such as 任务清单 show on the site, and pages with such text
are rendered in Chromium. Without a CJK font every such character is drawn as the same empty box,
the one drawn for a character no font has."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SCENARIO = "任务清单"
KANA = "タスク"
# A private-use code point: no installed font has a glyph for it, so it is drawn as the missing-glyph box.
NO_GLYPH = "\ue000"


def test_chinese_and_japanese_text_on_a_page_renders_as_glyphs_and_not_as_missing_glyph_boxes(
        live_server, site_page, fixture_scenarios):
    team = team_get_or_create(name="Lab")
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name="M"),
                                           environment_id="webui", flow="global", subset="mini", suite="fixture",
                                           status=Submission.Status.RUNNING, is_public=True)
    Attempt.objects.create(submission=submission, repeat=0,
                           scenario=Scenario.objects.get(environment_id="webui", suite="fixture", key=SCENARIO))
    page, errors = site_page()
    page.goto(f"{live_server.url}/submissions/{submission.id}/")
    cell = page.locator("td", has_text=SCENARIO).first
    cell.wait_for()

    # One probe on a line of its own in the scenario name's table cell: each character is drawn in
    # the cell's font, at the same place, so that two same glyphs come out as the same pixels.
    page.evaluate("(cell) => { const line = document.createElement('div');"
                  " const probe = document.createElement('span'); probe.className = 'glyph-probe';"
                  " line.append(probe); cell.append(line); }", cell.element_handle())
    probe = page.locator("span.glyph-probe")
    drawn: dict[str, bytes] = {}
    for character in SCENARIO + KANA + NO_GLYPH:
        probe.evaluate("(probe, character) => { probe.textContent = character; }", character)
        shot = Image.open(io.BytesIO(probe.screenshot())).convert("L")
        drawn[character] = shot.tobytes() + repr(shot.size).encode()

    boxes = [character for character in SCENARIO + KANA if drawn[character] == drawn[NO_GLYPH]]
    assert boxes == [], f"drawn as the missing-glyph box: {''.join(boxes)}"
    assert len({drawn[character] for character in SCENARIO + KANA}) == len(SCENARIO + KANA)
    assert errors == []
